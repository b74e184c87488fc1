# Chapter 3: SelfAttV3. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v3
# fill_values: a small program behind one figure, tested by test_selfatt_v3.c
EXTRA_PROGRAMS += fill_values
FIGURES  += figures/selfatt_v3.svg figures/selfatt_v3_causal.svg figures/fill_values.svg
$(TESTBIN)/selfatt_v3: $(SRC)/selfatt_v2.c $(SRC)/fill_values.c

figures/selfatt_v3.svg: $(BIN)/selfatt_v3
figures/selfatt_v3.svg: FIG_RUN = selfatt_v3 --example padded
figures/selfatt_v3.svg: FIG_PICK =
figures/selfatt_v3.svg: FIG_HEADING = SelfAttV3, the same-word head on a padded batch: hidden keys get 0, rows renormalise
figures/selfatt_v3.svg: FIG_TITLES = b = 0: eight real words|b = 1: keys 5, 6, 7 are padding
figures/selfatt_v3.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

figures/selfatt_v3_causal.svg: $(BIN)/selfatt_v3
figures/selfatt_v3_causal.svg: FIG_RUN = selfatt_v3 --example same-word --causal
figures/selfatt_v3_causal.svg: FIG_PICK = 0
figures/selfatt_v3_causal.svg: FIG_HEADING = SelfAttV3 --causal, the same-word head: each word finds only its earlier copies
figures/selfatt_v3_causal.svg: FIG_TITLES = selfatt_v3 --example same-word --causal
figures/selfatt_v3_causal.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat

figures/fill_values.svg: $(BIN)/fill_values
figures/fill_values.svg: FIG_RUN = fill_values
figures/fill_values.svg: FIG_PICK =
figures/fill_values.svg: FIG_HEADING = One example, three ways to hide a score (blank cells are NaN)
figures/fill_values.svg: FIG_TITLES = masked_fill -1e20 (seed 004)|masked_fill -inf (seeds 000, 002)|add -10000 (seed 003)
