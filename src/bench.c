/* bench.c — placeholder until its stage lands (owner replaces this file). */
#include "kasgen.h"
int cmd_bench(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_bench: not built yet\n"); return EXIT_USAGE; }
