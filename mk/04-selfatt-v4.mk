# Chapter 4: SelfAttV4. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v4
FIGURES  += figures/selfatt_v4.svg

figures/selfatt_v4.svg: $(BIN)/selfatt_v4
figures/selfatt_v4.svg: FIG_RUN = selfatt_v4 --example padded --causal
figures/selfatt_v4.svg: FIG_PICK =
figures/selfatt_v4.svg: FIG_HEADING = SelfAttV4 --causal on the padded batch: a row stops at the diagonal or the last real key
figures/selfatt_v4.svg: FIG_TITLES = b = 0: causal only|b = 1: causal, and keys 5, 6, 7 are padding
figures/selfatt_v4.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
