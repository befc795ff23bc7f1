/* emit_units.c — placeholder until its stage lands (owner replaces this file). */
#include "kasgen.h"
int cmd_units(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_units: not built yet\n"); return EXIT_USAGE; }
