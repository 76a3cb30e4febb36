/*
 * algorithms.h - the listing of every operation's algorithms
 * (algorithms.c).
 */
#ifndef CLI_ALGORITHMS_H
#define CLI_ALGORITHMS_H

/* Prints the algorithms of every operation on standard output, as text or
 * (json) one JSON object.  Returns the exit status. */
int cli_list_algorithms(int json);

#endif /* CLI_ALGORITHMS_H */
