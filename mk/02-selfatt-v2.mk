# Chapter 2: SelfAttV2. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v2
FIGURES  += $(FIG)/selfatt_v2.svg

$(FIG)/selfatt_v2.svg: $(BIN)/selfatt_v2
$(FIG)/selfatt_v2.svg: FIG_RUN = selfatt_v2 --example same-word
$(FIG)/selfatt_v2.svg: FIG_PICK = 0
$(FIG)/selfatt_v2.svg: FIG_HEADING = SelfAttV2, chapter 1 weights stacked in proj.weight: each query looks for its own word
$(FIG)/selfatt_v2.svg: FIG_TITLES = selfatt_v2 --example same-word
$(FIG)/selfatt_v2.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
