-- scripts/layers.lua: the one layer map of ktlua's C files, read by
-- scripts/deps.lua (spec/layers_spec.lua runs it) and written out in
-- doc/architecture.md. Each folder is a layer; a file may call files of
-- its own layer and of the layers before it, never of a later one.
-- `folder` is where the file lies (scripts/deps.lua checks it).
-- Files are named without .c, wherever they lie.
return {
  sources = { "core", "bindings" },

  layers = {
    { { folder = "core/base",
        what = "errors, values, allocation, host arrays, JSON, wire framing, files, child programs",
        files = { "kt", "copy_wide", "types", "array", "arg", "rng", "indices", "stats", "indexmap", "trie",
          "permutation", "json", "json_read", "wire", "atomic_file", "regular_file", "dynlib",
          "spawn", "cpus", "run_delay", "interrupt", "ktlua_exe", "log_append", "sha256", "handles" } } },
    { { folder = "core/space",
        what = "parameters, constraints, expressions and the spaces they make",
        files = { "expr", "expr_errors", "expr_ints", "expr_list", "expr_num", "expr_parse", "expr_string", "preproc", "preproc_expr",
          "config", "prune_kind", "space", "space_lazy", "space_natural", "space_plan",
          "space_walk" } } },
    { { folder = "core/models",
        what = "models of a space's times: surrogates, networks, bottleneck rules",
        files = { "additive", "ensemble", "surrogate", "pairwise", "bottlenecks", "forest" } } },
    { { folder = "core/device",
        what = "backends, device processes and their wire, NVRTC, CUDA, CUPTI, NVML loading",
        files = { "backend", "backend_cuda", "cuda_buffers", "backend_opencl", "cl_errors", "backend_remote",
          "remote_link", "cuda_binary", "cuda_devices", "cuda_lib", "cupti_lib", "nvml_lib", "nvrtc",
          "nvrtc_apart", "counters", "energy", "device", "backends", "device_wire", "devices",
          "devout", "apart", "remote_stage", "remote_async", "remote_compile", "remote_counters", "remote_energy",
          "remote_process", "server", "server_build", "server_loads", "builder", "compile_pool",
          "compile_worker", "program_store", "program_disk", "headers" } } },
    { { folder = "core/probes",
        what = "device microbenchmarks, in process or apart",
        files = { "probe", "probe_apart" } } },
    { { folder = "core/results",
        what = "results, metrics and the objective, journals, file formats read and written",
        files = { "result", "metrics", "result_check", "result_csv", "result_detect",
          "result_formats", "python_str", "result_io", "result_kt_cache", "result_ktt",
          "result_read", "result_t4", "journal", "journal_id", "recording" } } },
    { { folder = "core/search",
        what = "searchers, their registry and stop conditions",
        files = { "search", "search_opts", "neighbors", "search_annealing", "search_bestfirst",
          "search_differential", "search_exhaustive", "search_genetic", "search_greedy",
          "search_mcmc", "search_model", "search_portfolio", "search_profile", "search_pso",
          "search_random", "search_staged", "search_forest", "search_forest_prior", "metropolis" } } },
    { { folder = "core/eval",
        what = "the evaluation loop: tasks, kernels, builds, runs, checks, timing, replay",
        files = { "loop", "tuner", "tune", "tuning", "measure", "measure_energy", "guard", "verify",
          "verify_device", "verdict_later", "size_expr",
          "tuner_zone", "validate", "validate_async", "validate_close", "validate_device", "run",
          "run_buffers", "run_async", "run_batch", "launch_limits", "ahead", "outlier", "build", "codegen", "kernel", "task",
          "prune", "prune_shared", "profile", "online", "online_confirm", "split", "replay" } } },
    { { folder = "core/db",
        what = "the tuned-configuration database (SQLite) and the probes kept in it",
        files = { "db", "db_open", "db_probe", "db_metrics", "db_devices" } } },
    { { folder = "core/multi",
        what = "one tuning over several devices: fleets and MPI ranks",
        files = { "fleet", "mpi_devices", "mpi_rank", "mpi_job", "mpi_relay", "mpi_self", "mpi_wire" } } },
    { { folder = "bindings",
        what = "the Lua API over the core, and the executable",
        files = { "ktlua", "main", "prompt", "lk_util", "lk_types", "lk_arg", "lk_array",
          "lk_codegen", "lk_constraint", "lk_cuda", "lk_db", "lk_db_devices", "lk_deadline", "lk_device",
          "lk_energy", "lk_fleet", "lk_json", "lk_live", "lk_metrics", "lk_mpi", "lk_online", "lk_pipeline",
          "lk_prior", "lk_probe", "lk_profile", "lk_program_cache", "lk_prune", "lk_replay", "lk_results",
          "lk_run", "lk_search", "lk_space", "lk_space_def", "lk_spawn", "lk_split", "lk_t1",
          "lk_task", "lk_tune_output", "lk_tuner", "lk_watch" } } },
  },

  -- Loops, upward calls and upward includes that are allowed, each with
  -- why, and how many may be (issue 31): a loop listed here must be small;
  -- upward counts the calls and the includes together.
  limits = { loops = 3, upward = 2 },
  loops = {
    { why = "a portfolio is made of the searchers the registry names (kt_searcher_new), and is "
      .. "one of them", files = { "search", "search_portfolio" } },
    { why = "one module over space_int.h: space.c's mapping between indices and configurations "
      .. "answers for spaces too large to list through space_lazy.c and clears the natural "
      .. "numbering (space_natural.c), both built on space.c's groups; a cut needs hooks in "
      .. "kt_space", files = { "space", "space_lazy", "space_natural" } },
  },
  -- None: a device process on another MPI rank is reached through a table
  -- of functions that core/multi hands down with the rank's devices
  -- (core/device/far.h), as Lua's lua_Alloc is handed to the core.
  upward = {},
  -- Headers a lower layer includes from a higher one (types only: no call
  -- goes with them, except where upward above names it).
  includes = {
    { from = "result.h", to = "task.h", why = "results say what they are of: the task's "
      .. "kernels and each configuration's sizes (kt_sizes), read from its fields" },
    { from = "journal_id.h", to = "task.h", why = "a journal names its task by the task's own "
      .. "fields (name, kernels' source, options, sizes), as results do" },
  },
}
