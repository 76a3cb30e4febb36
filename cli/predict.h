/*
 * predict.h - `collc predict`, the command of cli/predict.c.
 */
#ifndef CLI_PREDICT_H
#define CLI_PREDICT_H

/* Runs `collc predict` with argv[0] = "predict" followed by its arguments
 * (collc's argv after the program name).  Returns the exit status
 * (collc(1)). */
int collc_predict(int argc, char **argv);

#endif
