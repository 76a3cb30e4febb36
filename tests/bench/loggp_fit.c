/*
 * loggp_fit.c - the LogGP parameters of MPI between two processes of this
 * host, over shared memory: the "shm" defaults of libtopo/machine/costs.c (make
 * bench, stage "costs").
 *
 *   mpirun -np 2 --bind-to core --mca btl self,vader loggp_fit [ROUNDS]
 *
 * The parameters are those of collc(7)'s model, in which a message of s
 * bytes costs its sender o of CPU and g + (s - 1) G of port, arrives L
 * after the sender's o, and costs its receiver o + (s - 1) G of CPU; so a
 * ping-pong of s bytes takes 2 (L + 2o + (s - 1) G).  Rank 0 is the client
 * and rank 1 the server of the parametrised round trip PRTT(n, d, s) of
 * Hoefler, Lichei and Rehm ("Low-overhead LogGP parameter assessment for
 * modern interconnection networks", IPDPS 2007; netgauge's "loggp"
 * pattern): the client sends n messages of s bytes, waiting d (busy) before
 * each but the first, the server receives them all and replies with one of
 * s bytes; the time is the client's, from its first send to the reply.
 *
 *   RTT(s)  = PRTT(1, 0, s)
 *   g       = (PRTT(n, 0, 8) - RTT(8)) / (n - 1): the interval of
 *             back-to-back small sends, set by the slower of sender and
 *             receiver (max(g, o) in the model's terms: a CPU cannot
 *             start a send, or take an arrival, before its o is over)
 *   o_s     = (PRTT(n, d, 8) - RTT(8)) / (n - 1) - d, with d = RTT(8),
 *             longer than the gap, so that each send costs o_s + d
 *   o_r     = the time of MPI_Recv of 8 bytes that arrived long before
 *             (the server waits 3 RTT(8) + 1 us first; Kielmann, Bal and
 *             Verstoep, "Fast measurement of LogP parameters for message
 *             passing platforms", IPDPS workshops 2000), less the cost of
 *             reading the clock
 *   G       = the least-squares slope of RTT(s) / 2 over s = 64 KiB ..
 *             1 MiB (Open MPI's vader moves these with one copy, by CMA)
 *   L_raw   = RTT(8) / 2 - o_s - o_r - 7 G
 *   L, o    = L_raw and (o_s + o_r) / 2 (the model has one o) when
 *             L_raw >= 0.  Between two cores of the host that set the
 *             defaults it was not (median -68 ns): a receive that
 *             finds its message waiting costs more than the part of a
 *             ping-pong's receive that follows the arrival (posting the
 *             receive overlaps the wait there), so o_s + o_r exceeds
 *             RTT(8) / 2 and no latency is left to resolve.  Then L = 0
 *             and o = (RTT(8) / 2 - 7 G) / 2, which keeps the model's round
 *             trip equal to the measured one (o_r above it is reported).
 *
 * Each round runs every measurement (RTT(8) first, the others in an order
 * that rotates from round to round, so that a slow stretch of the machine
 * does not always hit the same one), each the median of its iterations
 * after a few untimed ones, and fits the parameters from that round alone;
 * the output gives, for each parameter, the median over rounds with the
 * quartiles and the extremes, then the model's one-way time beside the
 * measured one for every size (the model is linear; the rendezvous of large
 * messages adds a constant it does not have).  The last line is JSON.
 * LOGGP_FIT_VERBOSE=1 (mpirun -x) prints each round's raw times.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BURST 16     /* n of PRTT(n, d, s) */
#define SMALL 8	     /* bytes of a small message */
#define ITERS 201    /* timed iterations of a small measurement */
#define BIG_ITERS 41 /* ... of a large one */
#define WARMUP 10
#define TAG 7

static const size_t big[] = {65536, 131072, 262144, 524288, 1048576};
#define NBIG (sizeof(big) / sizeof(big[0]))
#define MAXLEN 1048576

/* The measurements after RTT(8): the large round trips, the two bursts,
 * the receive overhead. */
enum { M_BURST0 = NBIG, M_BURSTD, M_ORECV, NMEAS };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void spin(double ns)
{
	double end = now() + ns;

	while (now() < end)
		;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n), by linear interpolation. */
static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return quantile(v, n, 0.5);
}

/* The median, quartiles and extremes of v[0..n) (sorts v). */
enum { S_MED, S_Q1, S_Q3, S_MIN, S_MAX, NSTAT };
static const char *const sname[NSTAT] = {"median", "q1", "q3", "min", "max"};

static void stats(double *v, int n, double out[NSTAT])
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	out[S_MED] = quantile(v, n, 0.5);
	out[S_Q1] = quantile(v, n, 0.25);
	out[S_Q3] = quantile(v, n, 0.75);
	out[S_MIN] = v[0];
	out[S_MAX] = v[n - 1];
}

static unsigned char *buf;

/* What one now() costs: taken off the directly timed o_r. */
static double clock_cost;

static void measure_clock(void)
{
	double t[1001];

	for (int i = 0; i < 1001; i++) {
		double t0 = now();

		t[i] = now() - t0;
	}
	clock_cost = median(t, 1001);
}

static void check(size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != (unsigned char)(i * 7 + 1)) {
			fprintf(stderr, "loggp_fit: byte %zu of %zu is wrong\n",
				i, len);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
}

/* One PRTT(n, d, len) on the client; the server's side of it. */
static double client(int n, double d, size_t len)
{
	double t0 = now();

	for (int i = 0; i < n; i++) {
		if (i > 0 && d > 0)
			spin(d);
		MPI_Send(buf, (int)len, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
	}
	MPI_Recv(buf, (int)len, MPI_BYTE, 1, TAG, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	return now() - t0;
}

static void server(int n, size_t len)
{
	for (int i = 0; i < n; i++)
		MPI_Recv(buf, (int)len, MPI_BYTE, 0, TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	MPI_Send(buf, (int)len, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
}

/* The median of iters PRTT(n, d, len) (on the client; 0 on the server),
 * after WARMUP untimed ones. */
static double prtt(int rank, int iters, int n, double d, size_t len)
{
	double t[ITERS];

	for (int i = 0; i < WARMUP + iters; i++) {
		if (rank == 0)
			t[i < WARMUP ? 0 : i - WARMUP] = client(n, d, len);
		else
			server(n, len);
	}
	if (rank == 1)
		check(len);
	return rank == 0 ? median(t, iters) : 0;
}

/* The median time of MPI_Recv of a message that arrived long before
 * (measured on the server, sent to the client). */
static double orecv(int rank, double rtt)
{
	double t[ITERS], r = 0;

	for (int i = 0; i < WARMUP + ITERS; i++) {
		if (rank == 0) {
			MPI_Send(buf, SMALL, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
			MPI_Recv(buf, SMALL, MPI_BYTE, 1, TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			double t0;

			/* The client sends RTT(8)/2 after our reply left:
			 * by 3 RTT(8) + 1 us it is in our FIFO. */
			spin(3 * rtt + 1000);
			t0 = now();
			MPI_Recv(buf, SMALL, MPI_BYTE, 0, TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			t[i < WARMUP ? 0 : i - WARMUP] = now() - t0;
			MPI_Send(buf, SMALL, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
		}
	}
	if (rank == 1) {
		r = median(t, ITERS) - clock_cost;
		MPI_Send(&r, 1, MPI_DOUBLE, 0, TAG + 1, MPI_COMM_WORLD);
	} else
		MPI_Recv(&r, 1, MPI_DOUBLE, 1, TAG + 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	return r;
}

/* The parameters fitted from one round. */
enum { P_L, P_O, P_G_, P_BIGG, P_OS, P_OR, P_LRAW, P_RTT, P_A, NPAR };
static const char *const pname[NPAR] = {
    "L", "o", "g", "G", "o_s", "o_r", "L_raw", "rtt8", "big_intercept"};
static const char *const pwhat[NPAR] = {
    "model: latency, ns",
    "model: overhead, ns",
    "model: gap between small sends, ns",
    "model: gap per byte, ns/B (slope of RTT/2, 64 KiB..1 MiB)",
    "send overhead, ns",
    "receive overhead (message waiting), ns",
    "RTT(8)/2 - o_s - o_r - 7G, ns",
    "round trip of 8 B, ns",
    "intercept of the G fit, ns (L + 2o - G in the model)"};

int main(int argc, char **argv)
{
	int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 21;
	double(*par)[NPAR], (*oneway)[NBIG + 1];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || rounds < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 loggp_fit "
					"[ROUNDS >= 1]\n");
		MPI_Finalize();
		return 2;
	}
	measure_clock();
	buf = malloc(MAXLEN);
	par = calloc((size_t)rounds, sizeof(*par));
	oneway = calloc((size_t)rounds, sizeof(*oneway));
	if (buf == NULL || par == NULL || oneway == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	{
		int cpu = sched_getcpu(), other;

		MPI_Sendrecv(&cpu, 1, MPI_INT, 1 - rank, 0, &other, 1, MPI_INT,
			     1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (rank == 0)
			printf("loggp_fit: ranks on CPUs %d and %d, %d rounds, "
			       "n = %d\n",
			       cpu, other, rounds, BURST);
	}

	for (int r = 0; r < rounds; r++) {
		double m[NMEAS], rtt8, sx = 0, sy = 0, sxx = 0, sxy = 0, G, A;
		double *p = par[r];

		for (size_t i = 0; i < MAXLEN; i++)
			buf[i] = (unsigned char)(i * 7 + 1);
		MPI_Barrier(MPI_COMM_WORLD);
		rtt8 = prtt(rank, ITERS, 1, 0, SMALL);
		MPI_Bcast(&rtt8, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		for (int k = 0; k < NMEAS; k++) {
			int e = (k + r) % NMEAS;

			MPI_Barrier(MPI_COMM_WORLD);
			if (e < (int)NBIG)
				m[e] = prtt(rank, BIG_ITERS, 1, 0, big[e]);
			else if (e == M_BURST0)
				m[e] = prtt(rank, ITERS, BURST, 0, SMALL);
			else if (e == M_BURSTD)
				m[e] = prtt(rank, ITERS, BURST, rtt8, SMALL);
			else
				m[e] = orecv(rank, rtt8);
		}
		if (rank != 0)
			continue;
		for (size_t i = 0; i < NBIG; i++) {
			double x = (double)big[i], y = m[i] / 2;

			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
		}
		G = (NBIG * sxy - sx * sy) / (NBIG * sxx - sx * sx);
		A = (sy - G * sx) / NBIG;
		p[P_RTT] = rtt8;
		p[P_G_] = (m[M_BURST0] - rtt8) / (BURST - 1);
		p[P_OS] = (m[M_BURSTD] - rtt8) / (BURST - 1) - rtt8;
		p[P_OR] = m[M_ORECV];
		p[P_BIGG] = G;
		p[P_A] = A;
		p[P_LRAW] = rtt8 / 2 - p[P_OS] - p[P_OR] - (SMALL - 1) * G;
		if (p[P_LRAW] >= 0) {
			p[P_L] = p[P_LRAW];
			p[P_O] = (p[P_OS] + p[P_OR]) / 2;
		} else {
			p[P_L] = 0;
			p[P_O] = (rtt8 / 2 - (SMALL - 1) * G) / 2;
		}
		oneway[r][0] = rtt8 / 2;
		for (size_t i = 0; i < NBIG; i++)
			oneway[r][i + 1] = m[i] / 2;
		if (getenv("LOGGP_FIT_VERBOSE") != NULL)
			printf("round %d: rtt8 %.0f burst0 %.0f burstd %.0f "
			       "orecv %.0f\n",
			       r + 1, rtt8, m[M_BURST0], m[M_BURSTD],
			       m[M_ORECV]);
		if (rtt8 < p[P_G_])
			printf("loggp_fit: round %d: d = RTT(8) = %.0f ns is "
			       "shorter than the gap %.0f ns: o_s is off\n",
			       r + 1, rtt8, p[P_G_]);
	}

	if (rank == 0) {
		double st[NPAR][NSTAT], v[rounds], ow;

		printf("%-14s %9s %9s %9s %9s %9s\n", "parameter", "median",
		       "q1", "q3", "min", "max");
		for (int k = 0; k < NPAR; k++) {
			for (int r = 0; r < rounds; r++)
				v[r] = par[r][k];
			stats(v, rounds, st[k]);
			printf("%-14s", pname[k]);
			for (int i = 0; i < NSTAT; i++)
				printf(" %9.4g", st[k][i]);
			printf("   %s\n", pwhat[k]);
		}
		printf("one-way time, s bytes: measured (median over rounds "
		       "of RTT/2) and the model's L + 2o + (s-1)G\n");
		for (size_t i = 0; i <= NBIG; i++) {
			size_t s = i == 0 ? SMALL : big[i - 1];
			double model = st[P_L][S_MED] + 2 * st[P_O][S_MED] +
				       (double)(s - 1) * st[P_BIGG][S_MED];

			for (int r = 0; r < rounds; r++)
				v[r] = oneway[r][i];
			ow = median(v, rounds);
			printf("  %8zu B %10.0f ns %10.0f ns  %+6.1f%%\n", s,
			       ow, model, 100 * (model / ow - 1));
		}
		printf("{\"rounds\": %d, \"burst\": %d, \"clock_ns\": %.1f",
		       rounds, BURST, clock_cost);
		for (int k = 0; k < NPAR; k++) {
			printf(", \"%s\": {", pname[k]);
			for (int i = 0; i < NSTAT; i++)
				printf("%s\"%s\": %.6g", i > 0 ? ", " : "",
				       sname[i], st[k][i]);
			printf("}");
		}
		printf(", \"oneway\": {");
		for (size_t i = 0; i <= NBIG; i++) {
			for (int r = 0; r < rounds; r++)
				v[r] = oneway[r][i];
			printf("%s\"%zu\": %.6g", i > 0 ? ", " : "",
			       i == 0 ? (size_t)SMALL : big[i - 1],
			       median(v, rounds));
		}
		printf("}}\n");
	}
	free(buf);
	free(par);
	free(oneway);
	MPI_Finalize();
	return 0;
}
