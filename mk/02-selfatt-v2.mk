# Chapter 2: SelfAttV2. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v2
FIGURES  += figures/selfatt_v2.svg
$(TESTBIN)/selfatt_v2: $(SRC)/selfatt_v1.c

figures/selfatt_v2.svg: $(BIN)/selfatt_v2
figures/selfatt_v2.svg: FIG_RUN = selfatt_v2 --batch 1 --seq 6 --dim 8 --seed 3
figures/selfatt_v2.svg: FIG_PICK = 0
figures/selfatt_v2.svg: FIG_HEADING = SelfAttV2 attention weights, one sequence (T = 6, D = 8)
figures/selfatt_v2.svg: FIG_TITLES = selfatt_v2 --batch 1 --seq 6 --dim 8 --seed 3
