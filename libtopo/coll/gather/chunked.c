/*
 * coll/gather/chunked.c - gather "chunked" (seed 004, the default): every member
 * cuts its SEND into chunks whose size is a multiple of the element type's
 * size, and each chunk goes straight to the root as its own message (its
 * own "communication job"), with no dependencies, so they all run in
 * parallel; the root stores each chunk at rank * B + the chunk's offset.
 *
 * Cost, n members, B bytes per member, chunk size c, k = ceil(B / c):
 * k(n - 1) transport messages moving (n - 1)B bytes, all into the root,
 * plus one local copy (the root's own block); time about
 * alpha + (n - 1)B beta at the root's link, the chunks overlapping.
 *
 * Chunk size: params.chunk (a multiple of the type size, else TOPO_EARG;
 * larger than B means one chunk), or 0 for the automatic size
 * auto_chunk() (see there).  B itself must be a multiple of the type
 * size, so that every chunk, the last included, holds whole elements.
 *
 * Receipt slots: one per member rank r (slot0 + r), belonging to the root
 * (where the chunks arrive), expecting k deliveries for r != root and 0
 * for the root's own block.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/*
 * Automatic chunks: a quarter of B, at least 64 KiB, rounded up to a
 * multiple of the type size (so blocks up to 64 KiB go whole).  A chunk
 * costs a message (a task in the pool, a receipt update), which small
 * chunks cannot repay: 8 bytes from each of 65,536 members took 0.87 ms
 * whole, 3.5 ms in 2-byte chunks and 8.0 ms in 1-byte chunks.  Large
 * blocks lose nothing by the split, and it lets a gather from fewer members
 * than worker threads spread one block over several: measured on this
 * memory-bound 2-core host (in-process transport, 2 threads, median of
 * 100 iterations, middle of 5 runs), 16 members x 1 MiB took 1.41 ms
 * whole, 1.54 in 256 KiB chunks, 1.37 in 64 KiB (noise level), 2 members x
 * 4 MiB 0.69 ms in every case.
 */
#define GATHER_AUTO_MIN ((size_t)64 << 10)
#define GATHER_AUTO_PARTS 4

/* plan.c's limit, here with a hint at the chunk size. */
#define GATHER_MAX_MESSAGES ((int64_t)1 << 30)

static size_t auto_chunk(size_t bytes, size_t ts)
{
	size_t c = (bytes + GATHER_AUTO_PARTS - 1) / GATHER_AUTO_PARTS;

	if (c < GATHER_AUTO_MIN)
		c = GATHER_AUTO_MIN;
	c = (c + ts - 1) / ts * ts;
	return c > bytes ? bytes : c;
}

int topo__plan_gather_chunked(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->root;
	size_t ts = p->type_size, bytes = p->params.bytes, chunk;
	int64_t B = (int64_t)bytes, k, slot0 = -1;
	struct topo__msg m;
	int rc = 0;

	if (bytes % ts != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "gather chunked: %zu bytes is not a multiple "
				 "of the %s size (%zu bytes)",
				 bytes, topo_type_name(p->params.type), ts);
	if (p->params.chunk % ts != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "gather chunked: chunk size %zu is not a "
				 "multiple of the %s size (%zu bytes)",
				 p->params.chunk,
				 topo_type_name(p->params.type), ts);
	if (bytes > (size_t)INT64_MAX / (size_t)n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "gather: %d blocks of %zu bytes do not fit "
				 "in a 64-bit size",
				 (int)n, bytes);
	chunk = p->params.chunk != 0 ? p->params.chunk : auto_chunk(bytes, ts);
	if (chunk > bytes)
		chunk = bytes;
	k = chunk == 0 ? 1 : (B + (int64_t)chunk - 1) / (int64_t)chunk;
	if (k > GATHER_MAX_MESSAGES / n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "gather chunked: %lld chunks of %zu bytes "
				 "from each of %d members exceed %lld messages "
				 "(use a larger chunk)",
				 (long long)k, chunk, (int)n,
				 (long long)GATHER_MAX_MESSAGES);

	rc = topo__plan_bufsize(p, TOPO__RECV, root, (int64_t)n * B, err);
	for (int32_t r = 0; rc == 0 && r < n; r++)
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
	/* The root's copy and k chunks from each other member; no
	 * dependencies; a counter per member. */
	if (rc == 0)
		rc = topo__plan_expect(p, 1 + k * ((int64_t)n - 1), 0, n, err);
	/* The root's counter slot0 + r counts rank r's chunks. */
	if (rc == 0)
		rc = topo__plan_slots(p, n, root, &slot0, err);
	for (int32_t r = 0; rc == 0 && p->slot_expect != NULL && r < n; r++)
		p->slot_expect[slot0 + r] = r == root ? 0 : (int32_t)k;

	if (rc == 0)
		rc = topo__local_copy(p, root, TOPO__SEND, 0, TOPO__RECV,
				      (int64_t)root * B, B, NULL, err);
	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, 0);
	m.dst = root;
	/* Chunk-major: every member's first chunk before anyone's second, so
	 * the pool starts with work from all members. */
	for (int64_t i = 0; rc == 0 && i < k; i++) {
		int64_t off = i * (int64_t)chunk;

		m.soff = off;
		m.len = B - off < (int64_t)chunk ? B - off : (int64_t)chunk;
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			if (r == root)
				continue;
			m.src = r;
			m.doff = (int64_t)r * B + off;
			m.slot = slot0 + r;
			rc = topo__plan_msg(p, &m, NULL, err);
		}
	}
	return rc;
}
