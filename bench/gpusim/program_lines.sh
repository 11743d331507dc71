#!/usr/bin/env bash
# The lines of a GPGPU-Sim run's output that the program printed: LOG without the
# simulator's own (its banner, configuration, per-launch and stream messages).
# Usage: program_lines.sh LOG
grep -Ev '^(GPGPU-Sim|gpgpu|-[a-z_]|addr_dec_mask|sub_partition_id_mask|Total number of memory|\*\*\*|self exe links|Running md5sum|Extracting |13$|Calculate Maxium|Maximum size is|padded cta size|Max CTA|Destroy streams|stream wait event|event update|ptx_fix:|DRAM Timing|different banks|[A-Za-z]+ +[0-9,]+ # |nbk|Nothin|\s*$|\s+\*\*\* GPGPU-Sim Simulator|\s+1=functional)' "$1"
