/** Number formatting shared by the reports, matching perf_analyzer's C++ streams. */

const PRECISION = 6;

function stripFraction(text: string): string {
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

/**
 * A double as a default C++ ostream writes it (printf "%g", 6 significant
 * digits, no trailing zeros, exponent form below 1e-4 and from 1e6): 69.6,
 * 83, 2.83324, 1.23457e+06. Ties round to even like glibc.
 */
export function formatGeneral(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (value === 0) return "0";
  const sign = value < 0 ? "-" : "";
  // 100 significant digits are the exact binary value for every magnitude reports show,
  // which makes the tie test below exact.
  const [mantissa, exponent] = Math.abs(value).toExponential(99).split("e");
  const digits = mantissa.replace(".", "");
  let exp = Number(exponent);
  let kept = digits.slice(0, PRECISION);
  const rest = digits.slice(PRECISION);
  const tie = rest[0] === "5" && !/[1-9]/.test(rest.slice(1));
  const roundUp = rest[0] > "5" || (rest[0] === "5" && !tie) ||
    (tie && Number(kept[PRECISION - 1]) % 2 === 1);
  if (roundUp) {
    kept = String(Number(kept) + 1);
    if (kept.length > PRECISION) {
      kept = kept.slice(0, PRECISION);
      exp += 1;
    }
  }
  if (exp < -4 || exp >= PRECISION) {
    const e = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    return `${sign}${stripFraction(`${kept[0]}.${kept.slice(1)}`)}e${e}`;
  }
  const fixed = exp >= 0
    ? `${kept.slice(0, exp + 1)}.${kept.slice(exp + 1)}`
    : `0.${"0".repeat(-exp - 1)}${kept}`;
  return sign + stripFraction(fixed);
}

/**
 * Whole microseconds, truncated like perf_analyzer's integer division. The
 * tiny allowance keeps a float such as 1004.9999999999999 (1.005 ms x 1000)
 * from printing as 1004.
 */
export function wholeUs(value: number): number {
  return Math.trunc(value + 1e-9) || 0;
}

/**
 * Text from a server (error messages, names) as one printable line: control
 * characters would let a hostile server rewrite the terminal (ANSI escapes)
 * or forge report lines, so line breaks become spaces and the rest "\xNN".
 */
export function printableLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
