# awa_bgw: PGXS build. `make && make install`, then `make installcheck` as a user
# that may run PostgreSQL (not root): pg_regress, isolation and TAP tests each start
# their own temporary server with the library preloaded.

MODULE_big = awa_bgw
OBJS = awa_bgw.o $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))

EXTENSION = awa_bgw
EXTVERSION = 0.7
DATA_built = awa_bgw--$(EXTVERSION).sql

PG_CPPFLAGS = -I$(srcdir)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Werror

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_regress

ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_iso

TAP_TESTS = 1

EXTRA_CLEAN = tmp_check_regress tmp_check_iso output_iso results regression.diffs \
	regression.out log tmp_run tmp_run.path

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

awa_bgw--$(EXTVERSION).sql: $(sort $(wildcard sql-src/*.sql))
	cat $^ > $@

.PHONY: model-check test run stop
run:
	bash $(srcdir)/scripts/run.sh

stop:
	bash $(srcdir)/scripts/stop.sh

model-check:
	$(MAKE) -C model check

# Everything CI runs after installing: needs a non-root user (see .ci/run).
test: installcheck model-check
