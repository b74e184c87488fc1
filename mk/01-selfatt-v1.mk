# Chapter 1: SelfAttV1. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v1
FIGURES  += figures/selfatt_v1_random.svg figures/selfatt_v1.svg

figures/selfatt_v1_random.svg: $(BIN)/selfatt_v1
figures/selfatt_v1_random.svg: FIG_RUN = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
figures/selfatt_v1_random.svg: FIG_PICK = 0
figures/selfatt_v1_random.svg: FIG_HEADING = SelfAttV1 with random weights: one sequence (T = 6, D = 8)
figures/selfatt_v1_random.svg: FIG_TITLES = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3

figures/selfatt_v1.svg: $(BIN)/selfatt_v1
figures/selfatt_v1.svg: FIG_RUN = selfatt_v1 --example same-word
figures/selfatt_v1.svg: FIG_PICK = 0
figures/selfatt_v1.svg: FIG_HEADING = SelfAttV1 with weights set by hand: each query looks for its own word
figures/selfatt_v1.svg: FIG_TITLES = selfatt_v1 --example same-word
figures/selfatt_v1.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
