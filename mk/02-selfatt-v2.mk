# Chapter 2: SelfAttV2. Its programs, its figures, and what its test includes.
PROGRAMS += selfatt_v2
FIGURES  += figures/selfatt_v2.svg
$(TESTBIN)/selfatt_v2: $(SRC)/selfatt_v1.c

figures/selfatt_v2.svg: $(BIN)/selfatt_v2
figures/selfatt_v2.svg: FIG_RUN = selfatt_v2 --example same-word
figures/selfatt_v2.svg: FIG_PICK = 0
figures/selfatt_v2.svg: FIG_HEADING = SelfAttV2, chapter 1 weights stacked in proj.weight: each query looks for its own word
figures/selfatt_v2.svg: FIG_TITLES = selfatt_v2 --example same-word
figures/selfatt_v2.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
