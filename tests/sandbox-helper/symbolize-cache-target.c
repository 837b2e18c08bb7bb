/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize-cache-target.c: built twice with a different name for one
 * function (-DPROBE=probe_alpha / probe_gamma) and, with -DPAD, other code
 * before it, so the two programs' symbols lie at other offsets, for
 * test-symbolize-cache. */
__attribute__((noinline)) int PROBE(int x);

#ifdef PAD
__attribute__((noinline)) int padding_before_probe(int x);
__attribute__((noinline)) int padding_before_probe(int x) {
        volatile int v[64];
        for (int i = 0; i < 64; i++)
                v[i] = x * i + (x ^ i) * 7 - i / (x | 1);
        int s = 0;
        for (int i = 0; i < 64; i++)
                s += v[i] * (i % 5) + (v[(i * 7) % 64] >> 2);
        return s;
}
#endif

__attribute__((noinline)) int PROBE(int x) {
        return x * 3 + 1;
}

int main(int argc, char **argv) {
        (void) argv;
#ifdef PAD
        return PROBE(argc) + padding_before_probe(argc);
#else
        return PROBE(argc);
#endif
}
