# awa_bgw: PGXS build. `make && make install`, then `make installcheck` as a user
# that may run PostgreSQL (not root): pg_regress, isolation and TAP tests each start
# their own temporary server with the library preloaded.

# this Makefile's directory: make run and make stop find their scripts here, before
# PostgreSQL (and so PGXS, which sets srcdir) is installed
here := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

MODULE_big = awa_bgw
OBJS = awa_bgw.o $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))

EXTENSION = awa_bgw
# Upgrades 0.6 -> 0.7 -> 0.8 -> 0.9 -> 0.10. The scripts of released versions are in
# released/, as they shipped, and never edited (released/README.md; the build checks
# them against released/SHA256SUMS). The version under development is assembled from
# the pieces in sql-src/ by sql-src/build.sh, one list per script.
DATA = $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/released/awa_bgw--*.sql))
DATA_built = awa_bgw--0.10.sql awa_bgw--0.9--0.10.sql

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
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)
else
# no PostgreSQL yet: `make run` installs one (scripts/run.sh); anything else needs it
all install installcheck:
	@echo "$(PG_CONFIG) not found: install PostgreSQL and its server headers" \
	      "(apt-get install postgresql-NN postgresql-server-dev-NN), or run make run" >&2; exit 2
endif

SQL_PIECES = $(wildcard $(srcdir)/sql-src/*.sql $(srcdir)/sql-src/*/*.sql $(srcdir)/sql-src/*/*/*.sql)

# a released script that differs from what shipped stops the build
all: released-check
released-check:
	@cd $(srcdir)/released && sha256sum --quiet -c SHA256SUMS || { echo \
	  "released/: the scripts of released versions are frozen (released/README.md);" \
	  "put the change in the next version's upgrade script" >&2; exit 1; }

awa_bgw--%.sql: $(srcdir)/sql-src/awa_bgw--%.list $(SQL_PIECES) $(srcdir)/sql-src/build.sh
	sh $(srcdir)/sql-src/build.sh $< > $@

.PHONY: model-check test run stop bench-pinned released-check
# the pinned-horizon benchmark (bench/README.md): make bench-pinned [PROFILE=smoke|short|long]
PROFILE ?= smoke
bench-pinned:
	PGBIN="$${PGBIN:-$(shell $(PG_CONFIG) --bindir)}" bash $(srcdir)/bench/pinned.sh $(PROFILE)

run:
	bash $(here)/scripts/run.sh

stop:
	bash $(here)/scripts/stop.sh

model-check:
	$(MAKE) -C model check

# Everything CI runs after installing: needs a non-root user (see .ci/run).
test: installcheck model-check
