// Server URLs for the PostgreSQL and MariaDB suites. Given → the suite runs
// against that server. Missing → a loud skip on a contributor's machine, and
// a failure under CI=true, so CI can never pass without the servers, unless
// ALE_SERVERS=none says so by name (the release's macOS and Windows jobs,
// whose runners cannot start them).
import { test } from 'node:test';

export function serverUrl(name) {
  const url = process.env[name];
  if (url) return url;
  const why = `${name} is not set: start the servers with \`eval "$(scripts/services.sh start)"\``;
  if (process.env.CI === 'true' && process.env.ALE_SERVERS !== 'none') {
    test(`${name} is required under CI=true`, () => {
      throw new Error(why);
    });
  } else {
    console.error(`\n!!! SKIPPING the ${name.replace('_URL', '')} suite: ${why}\n`);
  }
  return null;
}
