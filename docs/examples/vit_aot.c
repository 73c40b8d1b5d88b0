/* Calls a ViT compiled ahead of time by attn-compile, from plain C.
 *
 *   attn-compile models/vit-fashion-mnist.json --emit=obj -o vit.o
 *   attn-compile models/vit-fashion-mnist.json \
 *       --weights models/vit-fashion-mnist.safetensors \
 *       --save-packed-weights weights.bin
 *   cc -O2 -I. docs/examples/vit_aot.c vit.o -lm \
 *       -L/usr/lib/llvm-22/lib -lmlir_c_runner_utils -Wl,-rpath,/usr/lib/llvm-22/lib
 *   ./a.out weights.bin images.bin     # images: raw float32, B x C x H x W
 *
 * vit.h (written next to vit.o) declares the entry point, the memref
 * descriptor types of its arguments, the shapes and the packed weight layout.
 * Prints one line per image: the predicted class and the logits. */
#include "vit.h"

#include <stdio.h>
#include <stdlib.h>

#define IMAGE_ELEMS (ATTN_IMAGES_DIM0 * ATTN_IMAGES_DIM1 * ATTN_IMAGES_DIM2 * ATTN_IMAGES_DIM3)
#define CLASSES ATTN_LOGITS_DIM1

/* Reads exactly `count` floats from `path`; exits with a message otherwise. */
static float *read_floats(const char *path, long count) {
  FILE *f = fopen(path, "rb");
  float *data = malloc(sizeof(float) * count);
  if (!f || !data || fread(data, sizeof(float), count, f) != (size_t)count) {
    fprintf(stderr, "vit_aot: error: %s: expected %ld float32 values\n", path, count);
    exit(1);
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s WEIGHTS.bin IMAGES.bin\n", argv[0]);
    return 1;
  }
  float *weights = read_floats(argv[1], ATTN_WEIGHTS_DIM0);
  float *images = read_floats(argv[2], IMAGE_ELEMS);
  float logits[ATTN_LOGITS_DIM0 * CLASSES];

  attn_memref_f32_4d in = {images, images, 0,
                           {ATTN_IMAGES_DIM0, ATTN_IMAGES_DIM1, ATTN_IMAGES_DIM2, ATTN_IMAGES_DIM3},
                           {ATTN_IMAGES_DIM1 * ATTN_IMAGES_DIM2 * ATTN_IMAGES_DIM3,
                            ATTN_IMAGES_DIM2 * ATTN_IMAGES_DIM3, ATTN_IMAGES_DIM3, 1}};
  attn_memref_f32_1d w = {weights, weights, 0, {ATTN_WEIGHTS_DIM0}, {1}};
  attn_memref_f32_2d out = {logits, logits, 0, {ATTN_LOGITS_DIM0, CLASSES}, {CLASSES, 1}};
  _mlir_ciface_forward(&in, &w, &out);

  for (int b = 0; b < ATTN_LOGITS_DIM0; ++b) {
    int best = 0;
    for (int c = 1; c < CLASSES; ++c)
      if (logits[b * CLASSES + c] > logits[b * CLASSES + best])
        best = c;
    printf("image %d: class %d logits", b, best);
    for (int c = 0; c < CLASSES; ++c)
      printf(" %.6f", logits[b * CLASSES + c]);
    printf("\n");
  }
  free(weights);
  free(images);
  return 0;
}
