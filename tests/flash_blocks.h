/* flash_blocks.h: chapter 10's online-softmax core (Exercise 10.6) driven over one
 * head, as the tests of that core call it: tests/test_mha_fast_core.c and the hidden
 * tests/teacher/test_mha_fast.c. Include after mha_fast.c. */
#ifndef FLASH_BLOCKS_H
#define FLASH_BLOCKS_H

/* The core on one head: every block of BR queries of T, with 2^x (poly) or expf.
 * q, k, v (T rounded up to BC, hdp); got (T, hd). */
static inline void flash_blocks(float *got, const float *q, const float *k, const float *v, const Visibility *vis,
                                int T, const Fast *f, FlashWork *work, int poly) {
    for (int t0 = 0; t0 < T; t0 += BR) {
        if (poly) flash_block_exp2(got, q, k, v, vis, 0, 0, t0, T, f, work);
        else flash_block_expf(got, q, k, v, vis, 0, 0, t0, T, f, work);
    }
}

#endif
