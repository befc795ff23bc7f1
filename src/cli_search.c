/* cli_search.c — placeholder until its stage lands (owner replaces this file). */
#include "kasgen.h"
int cmd_generate(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_generate: not built yet\n"); return EXIT_USAGE; }
int cmd_plan(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_plan: not built yet\n"); return EXIT_USAGE; }
