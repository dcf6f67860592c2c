/*
** bottlenecks.h: the expert system of KTT's profile-based searcher
** (Filipovic et al., "Using hardware performance counters to speed up
** autotuning convergence on GPUs", JPDC 2022), for GPUs of compute
** capability 7.0 and later: from a configuration's hardware counters, how
** much each subsystem limits it (a bottleneck in [0, 1]), and from that,
** which counters a faster configuration should change, and which way.
**
** Memory: a unit's utilisation, split between reads and writes by their
** share of its traffic, asks for fewer of them (DRAM, L2, L1 global
** loads, shared memory); local memory (spills) by its share of the L2
** traffic times the busiest memory unit. Instructions: a pipe busier than
** `react` asks for fewer of its instructions, and then idle issue slots
** for more issue; idle SMs ask for more active cycles. KTT reads the
** instruction mix from SASS counters, which need the kernel patched; here
** the pipes' own counters stand for it.
*/
#ifndef KT_BOTTLENECKS_H
#define KT_BOTTLENECKS_H

enum {
  KT_PC_DRAM_PCT, KT_PC_DRAM_RD, KT_PC_DRAM_WR,
  KT_PC_L2_PCT, KT_PC_L2_RD, KT_PC_L2_WR,
  KT_PC_L1_PCT, KT_PC_L1_LD, KT_PC_LOCAL_LD, KT_PC_LOCAL_ST,
  KT_PC_SHM_PCT, KT_PC_SHM_LD, KT_PC_SHM_ST,
  KT_PC_SM_ACTIVE, KT_PC_ISSUE,
  KT_PC_FMA_PCT, KT_PC_FMA, KT_PC_ALU_PCT, KT_PC_ALU,
  KT_PC_LSU_PCT, KT_PC_LSU, KT_PC_FP64_PCT, KT_PC_FP64,
  KT_PC_COUNT
};

/* CUPTI's names of the counters above, in their order. */
extern const char *const kt_profile_counters[KT_PC_COUNT];

/* From counters pc (NAN where unknown), each counter's wanted change:
** change[i] < 0 asks for less, > 0 for more, |change[i]| <= 1 how much it
** matters; 0 for counters no bottleneck speaks of. */
void kt_profile_changes(const double *pc, double react, double *change);

#endif
