#!/bin/sh
# What the select plugin built for a Slurm release must give, written down apart from
# src/select_ai/select_api.h so that the tests check the header against it: the number of
# select_p_ entry points that release's slurmctld resolves, and the plugin id (the suite's
# own up to 24.11, cons_tres's from 25.05). Prints "ENTRY_POINTS PLUGIN_ID".
#
#   select_api_expect.sh VERSION        e.g. 24.11.5
case $1 in
    22.05.*) echo "36 190" ;;
    23.02.*) echo "32 190" ;;
    23.11.* | 24.05.* | 24.11.*) echo "31 190" ;;
    25.05.* | 25.11.*) echo "12 109" ;;
    26.05.*) echo "13 109" ;;
    *) echo "select_api_expect.sh: Slurm '$1': no select API generation is known for it" >&2; exit 1 ;;
esac
