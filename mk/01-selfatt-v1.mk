# Chapter 1: SelfAttV1. Its programs, its figures. (What a test includes, make reads from the compiler.)
PROGRAMS += selfatt_v1
FIGURES  += $(FIG)/selfatt_v1_random.svg $(FIG)/selfatt_v1.svg

$(FIG)/selfatt_v1_random.svg: $(BIN)/selfatt_v1
$(FIG)/selfatt_v1_random.svg: FIG_RUN = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3
$(FIG)/selfatt_v1_random.svg: FIG_PICK = 0
$(FIG)/selfatt_v1_random.svg: FIG_HEADING = SelfAttV1 with random weights: one sequence (T = 6, D = 8)
$(FIG)/selfatt_v1_random.svg: FIG_TITLES = selfatt_v1 --batch 1 --seq 6 --dim 8 --seed 3

$(FIG)/selfatt_v1.svg: $(BIN)/selfatt_v1
$(FIG)/selfatt_v1.svg: FIG_RUN = selfatt_v1 --example same-word
$(FIG)/selfatt_v1.svg: FIG_PICK = 0
$(FIG)/selfatt_v1.svg: FIG_HEADING = SelfAttV1 with weights set by hand: each query looks for its own word
$(FIG)/selfatt_v1.svg: FIG_TITLES = selfatt_v1 --example same-word
$(FIG)/selfatt_v1.svg: FIG_WORDS = the|cat|saw|the|dog|saw|the|cat
