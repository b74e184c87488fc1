# Chapter 3: SelfAttV3. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v3
# fill_values: a small program behind one figure, tested by test_selfatt_v3.c
EXTRA_PROGRAMS += fill_values
FIGURES  += figures/selfatt_v3.svg figures/selfatt_v3_causal.svg figures/fill_values.svg
$(TESTBIN)/selfatt_v3: $(SRC)/selfatt_v2.c $(SRC)/fill_values.c

figures/selfatt_v3.svg: $(BIN)/selfatt_v3
figures/selfatt_v3.svg: FIG_RUN = selfatt_v3
figures/selfatt_v3.svg: FIG_PICK =
figures/selfatt_v3.svg: FIG_HEADING = SelfAttV3 on the padded batch of the notebook: B = 3, T = 4, D = 2
figures/selfatt_v3.svg: FIG_TITLES = b = 0 (length 3)|b = 1 (length 2)|b = 2 (length 1)

figures/selfatt_v3_causal.svg: $(BIN)/selfatt_v3
figures/selfatt_v3_causal.svg: FIG_RUN = selfatt_v3 --batch 1 --seq 6 --dim 8 --seed 3 --causal
figures/selfatt_v3_causal.svg: FIG_PICK = 0
figures/selfatt_v3_causal.svg: FIG_HEADING = SelfAttV3 --causal: query t sees keys 0..t, and key 5 is padding
figures/selfatt_v3_causal.svg: FIG_TITLES = selfatt_v3 --batch 1 --seq 6 --dim 8 --seed 3 --causal

figures/fill_values.svg: $(BIN)/fill_values
figures/fill_values.svg: FIG_RUN = fill_values
figures/fill_values.svg: FIG_PICK =
figures/fill_values.svg: FIG_HEADING = One example, three ways to hide a score (blank cells are NaN)
figures/fill_values.svg: FIG_TITLES = masked_fill -1e20 (seed 004)|masked_fill -inf (seeds 000, 002)|add -10000 (seed 003)
