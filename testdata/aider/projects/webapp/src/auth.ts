export function check(path: string): boolean {
  return path === "/login" || path === "/logout";
}
