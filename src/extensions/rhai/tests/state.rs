//! `api.state` in Rhai: kept between calls, and aliased by `let s = api.state;` also after a
//! reload's hand-over.

use super::*;

#[test]
fn state_persists_between_calls() {
    on_worker(|| {
        let main = r#"
            if api.state.count == () { api.state.count = 0; }
            api.state.count += 10;
            api.on("input", |e| { api.state.count += 1; api.state.count });
            api.command("reset", |args| { api.state.clear(); api.state.fresh = true; });
        "#;
        let mut f = fixture_with(main, &[], limits(), json!({"count": 1, "keep": [1, "a"]}));
        f.engine.load().unwrap();
        assert_eq!(f.call("on", 0, vec![json!({})]).unwrap(), json!(12));
        assert_eq!(f.call("on", 0, vec![json!({})]).unwrap(), json!(13));
        assert_eq!(f.engine.state().0, json!({"count": 13, "keep": [1, "a"]}));
        f.call("command", 0, vec![json!("")]).unwrap();
        assert_eq!(f.engine.state().0, json!({"fresh": true}));
    });
}

#[test]
fn a_top_level_alias_of_api_state_sees_the_state_a_reload_hands_over() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            let s = api.state;
            api.command("get", |args| s.count);
            api.command("set", |args| { api.state.count = 7; });
            api.command("shared", |args| is_shared(s));
            "#,
        );
        assert_eq!(f.call("command", 2, vec![json!("")]).unwrap(), json!(true));
        f.call("command", 1, vec![json!("")]).unwrap();
        assert_eq!(f.call("command", 0, vec![json!("")]).unwrap(), json!(7));
        f.engine.set_state(json!({"count": 5})).unwrap();
        assert_eq!(f.call("command", 0, vec![json!("")]).unwrap(), json!(5));
    });
}
