-- awa_bgw 0.7: full install script, generated from sql-src/*.sql by the Makefile.
-- Do not edit the generated awa_bgw--0.7.sql; edit the pieces in sql-src/.
\echo Use "CREATE EXTENSION awa_bgw" to load this file. \quit
