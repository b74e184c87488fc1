# Chapter 1: SelfAttV1. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v1
FIGURES  += figures/selfatt_v1.svg

figures/selfatt_v1.svg: $(BIN)/selfatt_v1
figures/selfatt_v1.svg: FIG_RUN = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
figures/selfatt_v1.svg: FIG_PICK = 0
figures/selfatt_v1.svg: FIG_HEADING = SelfAttV1 attention weights, one sequence (T = 6, D = 8)
figures/selfatt_v1.svg: FIG_TITLES = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
