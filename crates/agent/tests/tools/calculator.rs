//! calculator: the grammar, its errors and its limits.

use super::*;

#[test]
fn calculator_precedence_and_associativity() {
    for (expression, expected) in [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("10 - 4 - 3", "3"),
        ("100 / 10 / 5", "2"),
        ("2 ^ 3 ^ 2", "512"),
        ("2 ** 3 ** 2", "512"),
        ("(2 ^ 3) ^ 2", "64"),
        ("-2 ^ 2", "-4"),
        ("(-2) ^ 2", "4"),
        ("2 ^ -1", "0.5"),
        ("-3 * -3", "9"),
        ("--3", "3"),
        ("+-+3", "-3"),
        ("2 * 3 % 4", "2"),
        ("7 % 3", "1"),
        ("-7 % 3", "-1"),
        ("7.5 % 2", "1.5"),
        ("1 - -1", "2"),
        ("2 ^ 10 - 1", "1023"),
        ("8 / 2 * 4", "16"),
        ("1 + 2 ^ 2 * 3", "13"),
    ] {
        assert_eq!(calc(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_numbers_functions_and_constants() {
    for (expression, expected) in [
        ("42", "42"),
        ("1e3", "1000"),
        ("1.5E-3 * 2", "0.003"),
        ("2.5e+2", "250"),
        (".5 + 5.", "5.5"),
        ("0.1 + 0.2", "0.3"),
        ("1 / 3", "0.333333333333"),
        ("2 / 3", "0.666666666667"),
        ("-1 / 3", "-0.333333333333"),
        ("sqrt(16)", "4"),
        ("sqrt(2)", "1.41421356237"),
        ("abs(-3.5)", "3.5"),
        ("sin(0)", "0"),
        ("sin(pi / 2)", "1"),
        ("cos(pi)", "-1"),
        ("sin(pi)", "0"),
        ("cos(pi / 2)", "0"),
        ("tan(pi)", "0"),
        ("sin(1e-20)", "1e-20"),
        ("0.1 + 0.2 - 0.3", "0"),
        ("1 - 0.9 - 0.1", "0"),
        ("1e-20 - 0", "1e-20"),
        ("1e-20 + 1e-20", "2e-20"),
        ("tan(pi / 4)", "1"),
        ("asin(1) * 2", "3.14159265359"),
        ("acos(1)", "0"),
        ("atan(1) * 4", "3.14159265359"),
        ("ln(e)", "1"),
        ("ln(1)", "0"),
        ("log(1000)", "3"),
        ("log2(1024)", "10"),
        ("exp(0)", "1"),
        ("exp(1)", "2.71828182846"),
        ("floor(-2.5)", "-3"),
        ("ceil(2.1)", "3"),
        ("round(2.5)", "3"),
        ("round(-2.5)", "-3"),
        ("min(3, 1, 2)", "1"),
        ("max(3, 1, 2)", "3"),
        ("max(4)", "4"),
        ("min(2, max(5, 1 + 9))", "2"),
        ("PI", "3.14159265359"),
        ("Sqrt(9)", "3"),
        ("e", "2.71828182846"),
        ("1e21", "1e21"),
        ("2 ^ 64", "1.84467440737e19"),
        ("2 ^ 53", "9.00719925474e15"),
        ("2 ^ 52", "4503599627370496"),
        ("123456789012345", "123456789012345"),
        ("1e-10 * 1.5", "1.5e-10"),
        ("0.000001", "0.000001"),
        ("-0", "0"),
        ("0 * -1", "0"),
        ("1e308 * 1", "1e308"),
        (" ( 1 ) ", "1"),
    ] {
        assert_eq!(calc(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_errors_say_what_and_where() {
    for (expression, expected) in [
        ("", "the expression is empty"),
        ("   ", "the expression is empty"),
        ("1 / 0", "division by zero at position 3"),
        ("1 / (2 - 2)", "division by zero at position 3"),
        ("5 % 0", "remainder of a division by zero at position 3"),
        ("0 ^ -1", "division by zero at position 3 (0 ^ negative)"),
        ("1 +", "syntax error at position 4: expected a number, a name or '('"),
        ("(1 + 2", "syntax error at position 7: expected ')'"),
        ("1 + 2)", "syntax error at position 6: unexpected ')'"),
        ("1 2", "syntax error at position 3: unexpected number 2"),
        ("2 pi", "syntax error at position 3: unexpected name 'pi'"),
        ("2e", "syntax error at position 2: unexpected name 'e'"),
        ("* 3", "syntax error at position 1: expected a number, a name or '(', found '*'"),
        ("1 + * 3", "syntax error at position 5: expected a number, a name or '(', found '*'"),
        ("()", "syntax error at position 2: expected a number, a name or '(', found ')'"),
        ("3 $ 4", "syntax error at position 3: unexpected character '$'"),
        ("1 + \u{0}", "syntax error at position 5: unexpected character '\\u{0}'"),
        ("1..2", "syntax error at position 1: invalid number '1..2'"),
        ("1.2.3 + 1", "syntax error at position 1: invalid number '1.2.3'"),
        (".", "syntax error at position 1: invalid number '.'"),
        ("1e999", "the number at position 1 is too large"),
        ("x + 1", "unknown name 'x' at position 1 (the constants are pi and e)"),
        ("1 + foo(2)", "unknown function 'foo' at position 5 (the functions are sqrt abs sin cos tan asin acos atan ln log log2 exp floor ceil round min max)"),
        ("sqrt", "'sqrt' at position 1 is a function: write sqrt(...)"),
        ("pi(2)", "'pi' at position 1 is a constant, not a function"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument, got 2 (at position 1)"),
        ("max()", "syntax error at position 5: expected a number, a name or '(', found ')'"),
        ("max(1,)", "syntax error at position 7: expected a number, a name or '(', found ')'"),
        ("max(1 2)", "syntax error at position 7: expected ',' or ')', found number 2"),
        ("sqrt(-1)", "sqrt(-1) is not a real number"),
        ("ln(0)", "ln(0) is infinite"),
        ("log(-1)", "log(-1) is not a real number"),
        ("asin(2)", "asin(2) is not a real number"),
        ("exp(1000)", "overflow: exp(1000) is too large"),
        ("(-8) ^ (1/3)", "-8 ^ 0.333333333333 is not a real number (at position 6)"),
        ("10 ^ 400", "overflow at position 4: the result is too large"),
        ("1e308 * 10", "overflow at position 7: the result is too large"),
        ("1e308 + 1e308", "overflow at position 7: the result is too large"),
    ] {
        assert_eq!(calc_err(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_limits() {
    let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    assert_eq!(calc(&nested(MAX_NESTING)), "1");
    let too_deep = "the expression is nested too deeply (the limit is 64 levels)";
    assert_eq!(calc_err(&nested(MAX_NESTING + 1)), too_deep);
    assert_eq!(calc_err(&"-".repeat(200)), too_deep);
    assert_eq!(calc_err(&format!("{}1", "sqrt(".repeat(100))), too_deep);
    assert_eq!(calc_err(&vec!["2"; 100].join("^")), too_deep);
    // Long but flat is fine.
    let flat = vec!["1"; 500].join("+");
    assert_eq!(flat.len(), 999);
    assert_eq!(calc(&flat), "500");
    let long = "1".repeat(MAX_EXPRESSION_LEN + 1);
    assert_eq!(
        calc_err(&long),
        "the expression is too long: 1001 characters; the limit is 1000"
    );
    // Positions count characters, not bytes.
    assert_eq!(
        calc_err("π + x"),
        "unknown name 'π' at position 1 (the constants are pi and e)"
    );
    assert_eq!(
        calc_err("é+1+"),
        "unknown name 'é' at position 1 (the constants are pi and e)"
    );
    assert_eq!(
        calc_err("1+1+ü"),
        "unknown name 'ü' at position 5 (the constants are pi and e)"
    );
}

#[test]
fn calculator_tool() {
    let mut host = Host::new();
    assert_eq!(host.ok("calculator", json!({"expression": "6 * 7"})), "42");
    assert_eq!(
        host.err("calculator", json!({"expression": "1/0"})),
        "division by zero at position 2"
    );
}
