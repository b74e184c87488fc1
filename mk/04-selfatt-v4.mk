# Chapter 4: SelfAttV4. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v4
FIGURES  += figures/selfatt_v4.svg

figures/selfatt_v4.svg: $(BIN)/selfatt_v4
figures/selfatt_v4.svg: FIG_RUN = selfatt_v4 --batch 2 --seq 5 --dim 8 --seed 5 --causal
figures/selfatt_v4.svg: FIG_PICK =
figures/selfatt_v4.svg: FIG_HEADING = SelfAttV4 --causal on a padded batch: B = 2, T = 5, D = 8
figures/selfatt_v4.svg: FIG_TITLES = b = 0 (length 4)|b = 1 (length 3)
