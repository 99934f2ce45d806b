"""The layouts the LUCB family's compiled modules share: the parameter vector and the state.

A member's parameters are one vector ``prm`` (its ``params``; indices ``P_*``), which
tells the compiled kernels (numba; :mod:`agents.lucb.family`) which member they play:
its sampling rule (``RULE_*``), radius family (``RADIUS_*``) and stop rule. The state of
an episode (built by :mod:`agents.lucb.family`) holds its heaps in the rows of shared
arrays (rows ``HM`` ... ``PK``; :mod:`agents.lucb.heaps`), a few registers (``F_*``,
``J_*``), and, for KL-LUCB on Bernoulli rewards, the classes of arms in the rows
``C_*`` (:mod:`agents.lucb.kl_bounds`). The kernels read these names as compile-time
constants.
"""

from __future__ import annotations

#: ``prm`` layout: sampling rule, stop tolerance, radius family, the lil' parameters
#: ``eps``, ``w`` of the LCB and of the UCB, LUCB1's (and KL-LUCB's) ``delta`` and
#: ``k1``, KL-LUCB's divergence family (``bandit_envs.divergences`` code), ``alpha`` and
#: rate kind (``agents.engine.confidence.KL_RATE_*``), and whether the stop rule waits for the
#: first round (1: Kaufmann & Kalyanakrishnan 2013 Algorithm 2's ``B(1) = inf``; 0: the
#: rule is checked from the initial pulls on).
P_RULE, P_STOP_EPS, P_RADIUS, P_EPS, P_W_LOW, P_W_UP, P_DELTA, P_K1 = range(8)
P_FAMILY, P_ALPHA, P_RATE, P_FIRST_ROUND = 8, 9, 10, 11
NP = 12
#: sampling rules: pull ``h`` and ``l``; ``h`` with probability ``T_l / (T_h + T_l)``
#: else ``l`` (lil'RandLUCB); the arm of largest radius in ``M (+) M~`` (lil'CLUCB).
RULE_BOTH, RULE_RANDOM, RULE_CLUCB = 0, 1, 2
#: radius families: lil' ``U(T, w)`` (scale 1); LUCB1's ``beta(T, t)`` (scale grows with
#: t); KL bounds at KL-LUCB's rate ``beta(t)``.
RADIUS_LIL, RADIUS_LUCB1, RADIUS_KL = 0, 1, 2
#: KL-LUCB's epochs: the keys' level is ``beta`` of round ``t + max(1, t >> KL_EPOCH_SHIFT)``.
KL_EPOCH_SHIFT = 4
#: ``prm[P_STOP_EPS] < 0``: stop when ``LCB_h >= UCB_l``; else when ``UCB_l - LCB_h < eps``.
STOP_PLAIN = -1.0

#: the heaps: High by mean (weakest on top), Low by mean (strongest), High by LCB
#: (smallest), Low by UCB (largest). Each is a max-heap of (key, sign * tb).
HM, LM, HL, LU = 0, 1, 2, 3
#: lil'CLUCB's extra heaps (:mod:`agents.lucb.clucb_split`): the High arms of ``M (+) M~``
#: by LCB (largest on top), its Low arms by UCB (smallest on top), and all its arms by
#: radius (largest on top, ties to the smaller tie key); HL and LU then hold only the
#: arms outside ``M (+) M~``.
IH, IL, PK = 4, 5, 6
#: registers of the state: ``fs[F_C]`` the kinetic trees' scale, ``fs[F_BETA]`` the level
#: of KL-LUCB's heap keys, ``js[J_HALF]`` the trees' leaf offset, ``js[J_M]`` lil'CLUCB's
#: ``m`` (``M (+) M~`` has ``2m`` arms).
F_C, F_BETA = 0, 1
J_HALF, J_M = 0, 1
#: KL-LUCB's classes (:mod:`agents.lucb.kl_bounds`): ``js[J_OCC]`` the used slots of the
#: current table, ``js[J_TAB]`` which of the two tables is current.
J_OCC, J_TAB = 2, 3
#: rows of ``kwin`` when it holds KL-LUCB's classes: per arm its class's slot and its
#: pairing-heap links (first child, next sibling, and the node pointing at it); per slot
#: of table 0 / 1 the class code ``2 count + side`` (-1: free) and the class's root arm
#: (-1: empty). ``kexp[t, slot]``: the class's mean.
C_CLS, C_CHILD, C_SIB, C_PREV = 0, 1, 2, 7
C_CODE = (3, 5)
C_ROOT = (4, 6)
