/*
** bottlenecks.c: counters to bottlenecks to wanted changes (see
** bottlenecks.h). A percentage counter is read as a fraction; a counter
** that is unknown (NAN) takes no part: the terms that need it are 0.
*/
#include "bottlenecks.h"

#include <math.h>
#include <string.h>

const char *const kt_profile_counters[KT_PC_COUNT] = {
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_fma.sum",
    "smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_alu.sum",
    "smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_lsu.sum",
    "smsp__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_fp64.sum",
};

static double known(double x) { return isnan(x) ? 0 : x; }

/* A percentage as a fraction in [0, 1]. */
static double fraction(double pct) {
  double f = known(pct) / 100;
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* A unit busy `util` of the time, its traffic split into reads and writes. */
static void split(double util, double rd, double wr, double *c_rd, double *c_wr) {
  rd = known(rd), wr = known(wr);
  if (rd + wr <= 0) return;
  *c_rd = -util * rd / (rd + wr);
  *c_wr = -util * wr / (rd + wr);
}

static void memory(const double *pc, double *ch) {
  double dram = fraction(pc[KT_PC_DRAM_PCT]), l2 = fraction(pc[KT_PC_L2_PCT]);
  double l1 = fraction(pc[KT_PC_L1_PCT]), shm = fraction(pc[KT_PC_SHM_PCT]);
  split(dram, pc[KT_PC_DRAM_RD], pc[KT_PC_DRAM_WR], &ch[KT_PC_DRAM_RD], &ch[KT_PC_DRAM_WR]);
  split(l2, pc[KT_PC_L2_RD], pc[KT_PC_L2_WR], &ch[KT_PC_L2_RD], &ch[KT_PC_L2_WR]);
  split(shm, pc[KT_PC_SHM_LD], pc[KT_PC_SHM_ST], &ch[KT_PC_SHM_LD], &ch[KT_PC_SHM_ST]);
  ch[KT_PC_L1_LD] = -l1;
  double local = known(pc[KT_PC_LOCAL_LD]) + known(pc[KT_PC_LOCAL_ST]);
  double l2all = known(pc[KT_PC_L2_RD]) + known(pc[KT_PC_L2_WR]);
  if (local > 0 && l2all > 0) {
    double share = local / l2all > 1 ? 1 : local / l2all;
    double busiest = fmax(dram, fmax(l2, l1));
    ch[KT_PC_LOCAL_LD] = ch[KT_PC_LOCAL_ST] = -share * busiest;
  }
}

static const int pipes[][2] = {{KT_PC_FMA_PCT, KT_PC_FMA}, {KT_PC_ALU_PCT, KT_PC_ALU},
                               {KT_PC_LSU_PCT, KT_PC_LSU}, {KT_PC_FP64_PCT, KT_PC_FP64}};

/* How far past react a utilisation is, in [0, 1]. */
static double past(double util, double react) {
  return util > react ? (util - react) / (1 - react) : 0;
}

static void instructions(const double *pc, double react, double *ch) {
  double busiest = 0;
  for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++) {
    double u = fraction(pc[pipes[i][0]]);
    ch[pipes[i][1]] = -past(u, react);
    if (u > busiest) busiest = u;
  }
  if (!isnan(pc[KT_PC_ISSUE]))
    ch[KT_PC_ISSUE] = (1 - fraction(pc[KT_PC_ISSUE])) * past(busiest, react);
  if (!isnan(pc[KT_PC_SM_ACTIVE])) ch[KT_PC_SM_ACTIVE] = 1 - fraction(pc[KT_PC_SM_ACTIVE]);
}

void kt_profile_changes(const double *pc, double react, double *change) {
  memset(change, 0, KT_PC_COUNT * sizeof *change);
  memory(pc, change);
  instructions(pc, react, change);
}
