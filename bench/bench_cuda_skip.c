/* bench_cuda where kcall is built without CUDA (no nvcc): says so and
 * writes {"benchmark": "bench_cuda", "skipped": "..."}, so that results.json
 * records why there are no GPU figures. */
#include <stdio.h>

#include "bench_util.h"

int main(int argc, char** argv) {
  const char* reason =
      "no CUDA device: kcall was built without CUDA (CMake found no nvcc, "
      "or KCALL_CUDA=OFF)";
  printf("bench_cuda: skipped: %s\n", reason);
  const char* json = kb_json_arg(argc, argv);
  if (!json) return 0;
  FILE* f = fopen(json, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", json);
    return 1;
  }
  fprintf(f, "{\"benchmark\": \"bench_cuda\", \"skipped\": \"%s\"}\n", reason);
  return fclose(f) == 0 ? 0 : 1;
}
