-- bench/pipeline/gaps.lua: where the device's idle time between configurations went
-- (results:summary().gap), as bench/pipeline/gemm.lua and bench/overhead/overhead.lua print it:
-- from one configuration's last wait for the device to the next one's first launch, per gap,
-- and the tuning thread's steps in it; then wall - device busy split into setup, those gaps and
-- the rest (the first configuration's compile, device time no event counts: restores, ...).
return function(sm, indent)
  local g = sm.gap
  local per = function(ms) return g.n > 0 and ms * 1e3 / g.n or 0 end
  local parts = g.verdict_ms + g.after_ms + g.loop_ms + g.prepare_ms + g.kernel_ms + g.build_wait_ms + g.launch_ms
  local wall, device, setup = sm.wall_ms / 1e3, sm.device_ms / 1e3, sm.setup_ms / 1e3
  local checks = sm.input_checks > 0 and sm.input_checks or 1
  return table.concat({
    ("%sbetween configurations (%d gaps): device idle %.1f us/gap = verdict %.1f + after %.1f (%d input checks) + loop %.1f + prepare %.1f + kernels %.1f + compile waits %.1f + launch %.1f + other %.1f us; kernels made ahead %d"):format(
      indent, g.n, per(g.idle_ms), per(g.verdict_ms), per(g.after_ms), sm.input_checks, per(g.loop_ms),
      per(g.prepare_ms), per(g.kernel_ms), per(g.build_wait_ms), per(g.launch_ms), per(g.idle_ms - parts), g.ahead),
    ("%swall - device busy %.3f s = setup %.3f + gaps %.3f (%d x %.1f us) + the rest %.3f s"):format(
      indent, wall - device, setup, g.idle_ms / 1e3, g.n, per(g.idle_ms), wall - device - setup - g.idle_ms / 1e3),
    ("%sinput checks %d (%d on the device, %d sent with the runs): per check %.2f requests to the device process, %.2f round trips"):format(
      indent, sm.input_checks, sm.input_checks_device, sm.input_checks_queued or 0,
      (sm.input_check_requests or 0) / checks, (sm.input_check_round_trips or 0) / checks)
  }, "\n")
end
