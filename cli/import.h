/*
 * import.h - `collc import`, the command of cli/import.c.
 */
#ifndef CLI_IMPORT_H
#define CLI_IMPORT_H

/* Runs `collc import` with argv[0] = "import" followed by its arguments
 * (collc's argv after the program name).  Returns the exit status
 * (collc(1)). */
int collc_import(int argc, char **argv);

#endif
