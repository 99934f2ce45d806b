"""The LUCB family: confidence-bound algorithms.

LUCB1, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB, KL-LUCB, lil'UCB, CLUCB-PAC, AT-LUCB
and UGapE.
"""
