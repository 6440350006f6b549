use warpfold_ptx::parse;
#[test]
fn quick() {
    for e in std::fs::read_dir("tests/data").unwrap() {
        let p = e.unwrap().path();
        let src = std::fs::read_to_string(&p).unwrap();
        match parse(&src) { Ok(m) => println!("{} ok {} items", p.display(), m.items.len()), Err(d) => println!("{} ERR {}", p.display(), d.render("x", &src)) }
    }
}
