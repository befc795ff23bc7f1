/* cli_front.c — placeholder until its stage lands (owner replaces this file). */
#include "kasgen.h"
int cmd_check(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_check: not built yet\n"); return EXIT_USAGE; }
int cmd_fusions(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_fusions: not built yet\n"); return EXIT_USAGE; }
int cmd_list(const CliOptions *o) { (void)o; fprintf(stderr, "kasgen: cmd_list: not built yet\n"); return EXIT_USAGE; }
Library *cli_load_library(const CliOptions *o) { (void)o; return NULL; }
TimingDb *cli_load_timingdb(const CliOptions *o) { (void)o; return NULL; }
