# Chapter 4: SelfAttV4. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v4
FIGURES  += $(FIG)/selfatt_v4.svg

$(FIG)/selfatt_v4.svg: $(BIN)/selfatt_v4
$(FIG)/selfatt_v4.svg: FIG_RUN = selfatt_v4 --example padded --causal
$(FIG)/selfatt_v4.svg: FIG_PICK =
$(FIG)/selfatt_v4.svg: FIG_HEADING = SelfAttV4 --causal on the padded batch: a row stops at the diagonal or the last real key
$(FIG)/selfatt_v4.svg: FIG_TITLES = b = 0: causal only|b = 1: causal, and keys 5, 6, 7 are padding
$(FIG)/selfatt_v4.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
