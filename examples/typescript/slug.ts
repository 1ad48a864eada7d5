// Try fastedit here (see examples/README.md):
// - Generate regex on the comment block below: a `const` with the pattern lands under it.
// - Complete the rest at the end of the last line.
// - Edit selection on `slugify`: "also strip accents".

// regex: page slug pattern
//   match: hello-world
//   match: fastedit-lsp-2
//   reject: Hello World
//   reject: -leading-dash

const POST_SLUG_PATTERN = /^\d{4}\/[a-z0-9-]+$/u;
const TAG_SLUG_PATTERN = /^[a-z]+$/u;

export function slugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

export function isPostSlug(text: string): boolean {
  return POST_SLUG_PATTERN.test(text);
}

export function isTagSlug(text: string): boolean {
  return TAG_SLUG_PATTERN.test(text);
}

export function isPageSlug(text: string): boolean {
  return PAGE_SLUG_PATTERN.test(
