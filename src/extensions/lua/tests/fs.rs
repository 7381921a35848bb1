//! `require("fs")` in the Lua engine (listing, reading, writing within the script's limits,
//! errors at the script's line), and what the sandbox keeps of Lua's own `io` and `os`, as
//! `stdlib/README.md` ("What stays of Lua's io and os") describes it.

use super::*;

/// Loads `main.lua` with a `/t` command running `body` (from line 2 on), with `limits`, and
/// calls it.
fn command(body: &str, limits: Limits) -> (Ext, Result<Json, ScriptError>) {
    let text = format!("local fs = require('fs') api.command('t', function(arg)\n{body}\nend)");
    let mut ext = build(&[("main.lua", &text)], limits, json!({}));
    ext.engine.load().unwrap();
    let cb = ext.cb("command", 0);
    let out = ext.call(cb, vec![json!("")]);
    (ext, out)
}

#[test]
fn fs_lists_reads_and_writes_files_against_the_working_folder() {
    on_worker(|| {
        let (ext, out) = command(
            r#"
            fs.write("out/deep/a.txt", "hello ")
            fs.write("out/b.txt", 42)
            local json = require("json")
            return {
              listed = fs.list("out"), root = fs.list("."),
              text = fs.read("out/deep/a.txt") .. fs.read("out/b.txt"),
              missing = json.encode(fs.list("no/such/folder")),
              exists = {fs.exists("out/b.txt"), fs.exists("out"), fs.exists("nope")},
              is_dir = {fs.is_dir("out"), fs.is_dir("out/b.txt"), fs.is_dir("nope")},
              same = require("fs") == fs,
            }
            "#,
            limits(),
        );
        let v = out.unwrap();
        assert_eq!(v["listed"], json!(["b.txt", "deep/"]));
        assert_eq!(v["root"], json!(["main.lua", "out/"]));
        assert_eq!(v["text"], "hello 42");
        assert_eq!(v["missing"], "[]");
        assert_eq!(v["exists"], json!([true, true, false]));
        assert_eq!(v["is_dir"], json!([true, false, false]));
        assert_eq!(v["same"], true);
        assert!(ext.dir.0.join("out/deep/a.txt").is_file());
    });
}

#[test]
fn fs_lists_hidden_names_and_absolute_paths() {
    on_worker(|| {
        let (_ext, out) = command(
            "local d = api.extension.path:match('^(.*)/') .. '/d'\n\
             fs.write(d .. '/.hidden', '')\n\
             fs.write(d .. '/z', '')\n\
             return fs.list(d)",
            limits(),
        );
        assert_eq!(out.unwrap(), json!([".hidden", "z"]));
    });
}

/// `fs.*` raising `msg` at line 3 of main.lua (the line of the call); the whole message.
fn fails_at_line_3(ext: &Ext, out: Result<Json, ScriptError>, msg: &str) -> String {
    let err = out.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Runtime, "{}", err.message);
    let want = format!("{}:3: {msg}", ext.main());
    assert!(
        err.message.starts_with(&want),
        "{}\nwanted {want}",
        err.message
    );
    err.message
}

#[test]
fn fs_read_refuses_what_rhai_read_file_refuses() {
    on_worker(|| {
        let (ext, out) = command("\nreturn fs.read('missing.txt')", limits());
        let missing = ext.dir.0.join("missing.txt").display().to_string();
        fails_at_line_3(
            &ext,
            out,
            &format!("fs.read: cannot read {missing}: No such file or directory"),
        );

        let small = Limits {
            max_string_bytes: 1024,
            ..limits()
        };
        let (ext, out) = command(
            "fs.write('big.txt', string.rep('x', 1025))\nreturn fs.read('big.txt')",
            small,
        );
        let big = ext.dir.0.join("big.txt").display().to_string();
        fails_at_line_3(
            &ext,
            out,
            &format!(
                "fs.read: cannot read {big}: it is larger than 1 KiB (the script size limits)"
            ),
        );

        let (ext, out) = command(
            "local f = io.open(api.extension.path:match('^(.*)/') .. '/bin.txt', 'wb') \
             f:write('ok \\255\\254') f:close()\nreturn fs.read('bin.txt')",
            limits(),
        );
        let bin = ext.dir.0.join("bin.txt").display().to_string();
        fails_at_line_3(
            &ext,
            out,
            &format!("fs.read: cannot read {bin}: it is not UTF-8 text"),
        );
    });
}

#[test]
fn fs_read_refuses_a_fifo_without_blocking() {
    on_worker(|| {
        let mut ext = build(
            &[(
                "main.lua",
                "local fs = require('fs')\napi.command('t', function()\nreturn fs.read('pipe')\nend)",
            )],
            limits(),
            json!({}),
        );
        let fifo = ext.dir.0.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        ext.engine.load().unwrap();
        let cb = ext.cb("command", 0);
        let start = Instant::now();
        let out = ext.call(cb, vec![json!("")]);
        assert!(start.elapsed() < Duration::from_secs(5));
        let shown = fifo.display().to_string();
        fails_at_line_3(
            &ext,
            out,
            &format!("fs.read: cannot read {shown}: not a regular file"),
        );
    });
}

#[test]
fn fs_errors_are_raised_at_the_line_and_caught_by_pcall_as_text() {
    on_worker(|| {
        let (ext, out) = command("fs.write('f', '')\nreturn fs.list('f')", limits());
        let f = ext.dir.0.join("f").display().to_string();
        fails_at_line_3(&ext, out, &format!("fs.list: cannot list {f}: "));

        let (ext, out) = command("\nreturn fs.read()", limits());
        fails_at_line_3(&ext, out, "fs.read: the path must be a string, not nil");
        let (ext, out) = command("\nfs.write('x', {})", limits());
        fails_at_line_3(
            &ext,
            out,
            "fs.write: the text must be a string, not a table",
        );
        let (ext, out) = command("\nreturn fs.exists(12)", limits());
        fails_at_line_3(
            &ext,
            out,
            "fs.exists: the path must be a string, not an integer",
        );
        let (ext, out) = command("\nfs.write('x', 'ok \\255')", limits());
        fails_at_line_3(&ext, out, "fs.write: the text is not UTF-8");
        let (ext, out) = command("\nreturn fs.read('.')", limits());
        let msg = fails_at_line_3(&ext, out, "fs.read: cannot read ");
        assert!(msg.ends_with(": not a regular file"), "{msg}");
        let (ext, out) = command("\nfs.is_dir('')", limits());
        fails_at_line_3(&ext, out, "fs.is_dir: the path is empty");

        let (_ext, out) = command(
            "local ok, err = pcall(fs.read, 'missing')\nreturn {ok, type(err), err}",
            limits(),
        );
        let v = out.unwrap();
        assert_eq!((&v[0], &v[1]), (&json!(false), &json!("string")));
        let msg = v[2].as_str().unwrap();
        assert!(msg.contains("fs.read: cannot read "), "{msg}");
    });
}

#[test]
fn the_sandbox_keeps_lua_io_and_os_as_the_reference_says() {
    on_worker(|| {
        let (ext, out) = command(
            r#"
            local keys = function(t)
              local out = {}
              for k in pairs(t) do out[#out + 1] = k end
              table.sort(out)
              return table.concat(out, " ")
            end
            local d = api.extension.path:match("^(.*)/") .. "/"
            local f = assert(io.open(d .. "t.txt", "w"))
            f:write("one\n", 2, "\n")
            f:close()
            local lines = {}
            for l in io.lines(d .. "t.txt") do lines[#lines + 1] = l end
            local r = assert(io.open(d .. "t.txt"))
            local all = r:read("a")
            r:seek("set")
            local methods = {}
            for l in r:lines() do methods[#methods + 1] = l end
            io.close(r)
            local tmp = io.tmpfile()
            tmp:write("x")
            tmp:seek("set")
            local name = os.tmpname()
            os.remove(name)
            assert(os.rename(d .. "t.txt", d .. "u.txt"))
            local stdout_ok, stdout_err = io.open("/dev/stdout", "w")
            return {
              io = keys(io), os = keys(os),
              lines = table.concat(lines, ","), all = all, tmp = tmp:read("a"),
              methods = table.concat(methods, ","),
              type = io.type(r), renamed = fs.exists("u.txt") and not fs.exists("t.txt"),
              removed = os.remove(d .. "u.txt") == true and not fs.exists("u.txt"),
              stdout = stdout_ok == nil and stdout_err,
              read = select(2, pcall(io.read)), lines_stdin = select(2, pcall(io.lines)),
              time = math.type(os.time()), clock = math.type(os.clock()),
              date = os.date("!%Y", 0), diff = os.difftime(10, 4),
              env = os.getenv("PATH") ~= nil and os.getenv("MYPI_NO_SUCH_VARIABLE") == nil,
              written = io.write("to the log") == io.stdout,
              stderr = io.stderr:write("err line") == io.stderr,
              stdin = select(2, pcall(io.stdin.read, io.stdin)),
              gone = io.input == nil and io.output == nil and io.popen == nil
                and os.exit == nil and os.execute == nil and os.setlocale == nil,
            }
            "#,
            limits(),
        );
        let v = out.unwrap();
        assert_eq!(
            v["io"],
            "close flush lines open read stderr stdin stdout tmpfile type write"
        );
        assert_eq!(
            v["os"],
            "clock date difftime getenv remove rename time tmpname"
        );
        assert_eq!(
            (&v["lines"], &v["methods"]),
            (&json!("one,2"), &json!("one,2"))
        );
        assert_eq!(v["all"], "one\n2\n");
        assert_eq!(v["tmp"], "x");
        assert_eq!(v["type"], "closed file");
        assert_eq!((&v["renamed"], &v["removed"]), (&json!(true), &json!(true)));
        assert_eq!(
            v["stdout"],
            "/dev/stdout: extensions cannot open mypi's standard streams or terminal"
        );
        for k in ["read", "lines_stdin", "stdin"] {
            let msg = v[k].as_str().unwrap();
            assert!(
                msg.contains("extensions cannot read mypi's standard input"),
                "{msg}"
            );
        }
        assert_eq!(
            (&v["time"], &v["clock"]),
            (&json!("integer"), &json!("float"))
        );
        assert_eq!((&v["date"], &v["diff"]), (&json!("1970"), &json!(6.0)));
        assert_eq!((&v["env"], &v["written"]), (&json!(true), &json!(true)));
        let logs = ext.rec.of("log");
        for line in ["to the log", "err line"] {
            assert!(logs.iter().any(|l| l.0.ends_with(line)), "{logs:?}");
        }
        assert_eq!((&v["stderr"], &v["gone"]), (&json!(true), &json!(true)));
    });
}

#[test]
fn an_extension_named_like_a_standard_module_still_gets_the_module() {
    on_worker(|| {
        let mut ext = build(
            &[(
                "fs.lua",
                "local fs = require('fs')\napi.state.kind = type(fs.list)",
            )],
            limits(),
            json!({}),
        );
        ext.engine.load().unwrap();
        assert_eq!(ext.engine.state().0["kind"], "function");
        let (ext, err) = load_err("require('main')", limits());
        let itself = format!("'{}' is the extension itself", ext.main());
        assert!(err.message.contains(&itself), "{}", err.message);
    });
}

/// `io.open` has none of `fs.read`'s checks: it reads past the size limit and bytes that are
/// not UTF-8.
#[test]
fn io_open_reads_what_fs_read_refuses() {
    on_worker(|| {
        let small = Limits {
            max_string_bytes: 1024,
            ..limits()
        };
        let (_ext, out) = command(
            r#"
            local p = api.extension.path:match("^(.*)/") .. "/raw.bin"
            local w = assert(io.open(p, "wb"))
            w:write(string.rep("\255", 2048))
            w:close()
            local r = assert(io.open(p, "rb"))
            local n = #r:read("a")
            r:close()
            return {n = n, fs = select(2, pcall(fs.read, p))}
            "#,
            small,
        );
        let v = out.unwrap();
        assert_eq!(v["n"], 2048);
        let refused = v["fs"].as_str().unwrap();
        assert!(refused.contains("larger than 1 KiB"), "{refused}");
    });
}

/// `io.open` opens a FIFO as it is: reading waits for a writer (here one that comes after
/// 300 ms).
#[test]
fn io_open_waits_on_a_fifo() {
    on_worker(|| {
        let mut ext = build(
            &[(
                "main.lua",
                "api.command('t', function(p)\nlocal f = assert(io.open(p, 'r'))\n\
                 local text = f:read('a') f:close() return text\nend)",
            )],
            limits(),
            json!({}),
        );
        ext.engine.load().unwrap();
        let fifo = ext.dir.0.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                std::fs::write(fifo, "from the writer").unwrap();
            })
        };
        let (cb, ctx) = (ext.cb("command", 0), ext.ctx());
        let start = Instant::now();
        let arg = json!(fifo.display().to_string());
        let out = ext.engine.call(cb, &[arg], &ctx, Duration::from_secs(10));
        writer.join().unwrap();
        assert_eq!(out.unwrap(), "from the writer");
        assert!(start.elapsed() >= Duration::from_millis(300));
    });
}
