/* report.c — placeholder until its stage lands (owner replaces this file). */
#include "kasgen.h"
int cmd_report(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_report: not built yet\n"); return EXIT_USAGE; }
