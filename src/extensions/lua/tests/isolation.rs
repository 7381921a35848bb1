//! Isolation of the Lua engine: endless loops (also inside pcall and coroutines), memory
//! bombs and deep recursion end in errors, never in a hang or a crash.

use super::*;

/// Loads a script whose `input` handler runs `body`, calls it and expects a budget stop
/// within a reasonable time, then a working engine.
fn expect_budget_stop(body: &str) {
    let mut ext = load(&format!(
        "api.on('input', function(e) if e.ping then return end\n{body}\nend)"
    ));
    let start = Instant::now();
    let err = ext.fire(0, json!({})).unwrap_err();
    let took = start.elapsed();
    assert_eq!(err.kind, ErrorKind::Budget, "{body}: {}", err.message);
    assert!(
        err.message.contains("stopped after 0.2 s"),
        "{}",
        err.message
    );
    assert!(
        err.message.starts_with(&format!("{}:", ext.main())),
        "{}",
        err.message
    );
    assert!(took < Duration::from_secs(5), "{body}: took {took:?}");
    ext.still_works();
    ext.fire(0, json!({"ping": true})).unwrap();
}

#[test]
fn endless_loops_are_stopped() {
    on_worker(|| {
        expect_budget_stop("while true do end");
        expect_budget_stop("while true do pcall(function() while true do end end) end");
        expect_budget_stop(
            "while true do xpcall(function() while true do end end, function(m) return m end) end",
        );
        expect_budget_stop(
            "while true do local co = coroutine.create(function() while true do end end) coroutine.resume(co) end",
        );
        expect_budget_stop(
            "local f = coroutine.wrap(function() while true do end end) while true do pcall(f) end",
        );
        expect_budget_stop("while true do load(function() while true do end end) end");
        expect_budget_stop(
            "while true do pcall(string.gsub, 'aaa', 'a', function() while true do end end) end",
        );
    });
}

#[test]
fn an_endless_loop_at_load_is_stopped() {
    on_worker(|| {
        let start = Instant::now();
        let (ext, err) = load_err("local n = 0\nwhile true do n = n + 1 end", limits());
        assert_eq!(err.kind, ErrorKind::Budget);
        assert!(
            err.message
                .starts_with(&format!("{}:2: stopped after", ext.main())),
            "{}",
            err.message
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    });
}

#[test]
fn host_time_does_not_count_against_the_budget() {
    on_worker(|| {
        let mut ext =
            load("api.on('input', function() api.exec('sleep', {'0.4'}) return 'done' end)");
        assert_eq!(ext.fire(0, json!({})).unwrap(), json!("done"));
    });
}

#[test]
fn a_memory_bomb_is_stopped_and_the_vm_recovers() {
    on_worker(|| {
        let small = Limits {
            memory_bytes: 16 * 1024 * 1024,
            ..limits()
        };
        let mut ext = build(
            &[(
                "main.lua",
                r#"api.on("input", function(e)
                  if e.ping then return "pong" end
                  local t = {} while true do t[#t + 1] = string.rep("x", 1e6) .. #t end
                end)"#,
            )],
            small,
            json!({}),
        );
        ext.engine.load().unwrap();
        let err = ext.fire(0, json!({})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Memory, "{}", err.message);
        assert!(err.message.contains("out of memory"), "{}", err.message);
        assert!(err.message.contains("16 MiB"), "{}", err.message);
        assert_eq!(ext.fire(0, json!({"ping": true})).unwrap(), json!("pong"));
        assert!(ext.engine.used_memory() < 4 * 1024 * 1024);
    });
}

#[test]
fn deep_recursion_is_an_error_not_a_crash() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.on("input", function() local function f() return f() + 1 end return f() end)
            api.on("input", function() local function f() return pcall(f) end return {f()} end)
            api.on("input", function()
              local function f(s) return (s:gsub(".", function(c) return f(c) end)) end
              return f("ab")
            end)
            api.on("input", function()
              local function cmp(a, b) table.sort({3, 2, 1}, cmp) return a < b end
              table.sort({3, 2, 1}, cmp)
            end)
            api.on("input", function()
              local t = setmetatable({}, {__tostring = function(t) api.log(t) return "x" end})
              api.log(t)
            end)
            api.on("input", function()
              local t
              t = setmetatable({}, {__tostring = function() return string.format("%s", t) end})
              return tostring(t)
            end)
            "#,
        );
        let err = ext.fire_patiently(0, json!({})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Runtime, "{}", err.message);
        assert!(err.message.contains("stack overflow"), "{}", err.message);
        // The innermost pcall catches the C stack overflow: the call returns normally.
        let v = ext.fire_patiently(1, json!({})).unwrap();
        let last = v.as_array().unwrap().last().unwrap().as_str().unwrap();
        assert!(last.contains("stack overflow"), "{last}");
        // A `__tostring` that logs itself: Lua's C stack limit ends it, as an error or (when
        // the limit is hit inside `tostring`, which then falls back) a normal return.
        if let Err(e) = ext.fire_patiently(4, json!({})) {
            assert!(e.message.contains("stack overflow"), "{}", e.message);
        }
        for n in [2, 3, 5] {
            let err = ext
                .fire_patiently(n, json!({}))
                .map(|v| format!("handler {n} returned {v}"))
                .unwrap_err();
            assert!(
                err.message.contains("stack overflow"),
                "{n}: {}",
                err.message
            );
        }
        ext.still_works();
    });
}

#[test]
fn code_run_while_a_budget_stop_unwinds_is_bounded() {
    on_worker(|| {
        let looping_close = "setmetatable({}, {__close = function() while true do end end})";
        expect_budget_stop(&format!(
            "local x <close> = {looping_close} while true do end"
        ));
        expect_budget_stop(&format!(
            "local function f(n) local x <close> = {looping_close} if n > 0 then return f(n - 1) end while true do end end f(50)"
        ));
        expect_budget_stop(&format!(
            "pcall(function() local x <close> = {looping_close} while true do end end) while true do end"
        ));
        expect_budget_stop(
            "xpcall(function() while true do end end, function() while true do end end)",
        );
        expect_budget_stop(
            "local t = setmetatable({}, {__index = function() while true do end end}) local _ = t.x",
        );
        expect_budget_stop("table.sort({3, 2, 1, 5, 4}, function(a, b) while true do end end)");
        expect_budget_stop(
            "local e = setmetatable({}, {__tostring = function() while true do end end}) error(e)",
        );
    });
}
