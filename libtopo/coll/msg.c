/*
 * coll/msg.c - the message set-ups every plan builder repeats: a template
 * of kind, buffers and length that a loop fills member by member, and a
 * member's own copy between its buffers; and the refusal when the ids a
 * builder keeps do not fit in memory.  Kept out of plan/plan.c, whose
 * helpers know nothing of how an algorithm lays out its buffers.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

#include <string.h>

void topo__msg_init(struct topo__msg *m, int kind, int sbuf, int dbuf,
		    int64_t len)
{
	memset(m, 0, sizeof(*m));
	m->kind = (uint8_t)kind;
	m->sbuf = (uint8_t)sbuf;
	m->dbuf = (uint8_t)dbuf;
	m->len = len;
	m->slot = -1;
}

int topo__local_copy(struct topo_plan *p, int32_t member, int sbuf,
		     int64_t soff, int dbuf, int64_t doff, int64_t len,
		     int64_t *id, topo_error *err)
{
	struct topo__msg m;

	topo__msg_init(&m, TOPO__COPY, sbuf, dbuf, len);
	m.src = m.dst = member;
	m.soff = soff;
	m.doff = doff;
	return topo__plan_msg(p, &m, id, err);
}

int topo__nomem(topo_error *err, const char *what, int32_t n)
{
	return topo__err(err, TOPO_ENOMEM, NULL, NULL,
			 "out of memory planning %s over %d members", what,
			 (int)n);
}
