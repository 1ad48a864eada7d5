// Try fastedit here (see examples/README.md):
// - Generate regex on the comment block below: a `const` with the pattern lands under it.
// - Complete the rest at the end of the last line.
// - Edit selection on `formatPrice`: "accept a currency code argument".

// regex: semantic version pattern
//   match: 1.2.3
//   match: 10.20.30
//   match: 1.0.0-rc.1
//   reject: 1.2
//   reject: v1.2.3

const NODE_VERSION_PATTERN = /^v\d+\.\d+\.\d+$/u;
const API_VERSION_PATTERN = /^v\d+$/u;

function formatPrice(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}

function isNodeVersion(text) {
  return NODE_VERSION_PATTERN.test(text);
}

function isApiVersion(text) {
  return API_VERSION_PATTERN.test(text);
}

function isSemanticVersion(text) {
  return SEMANTIC_VERSION_PATTERN.test(
