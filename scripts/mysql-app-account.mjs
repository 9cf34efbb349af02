// Makes the MariaDB account an application runs as, for the release
// workflow's MariaDB container (scripts/services.sh makes the same one with
// the mariadb client): ale_app, with SELECT, INSERT, UPDATE and DELETE on
// the test database and nothing else, so that information_schema hides
// trigger statements from it as it does from an application's account.
//
//   node scripts/mysql-app-account.mjs mysql://root:…@127.0.0.1:3306/ale_test
import mysql from 'mysql2/promise';

const usage = 'usage: node scripts/mysql-app-account.mjs <a root URL of the server, naming the test database>';
const root = process.argv[2];
if (!root) throw new Error(usage);
const database = decodeURIComponent(new URL(root).pathname.slice(1));
if (database === '') throw new Error(usage);
const c = await mysql.createConnection({ uri: root });
try {
  await c.query("CREATE USER IF NOT EXISTS 'ale_app'@'%' IDENTIFIED BY 'ale_app'");
  await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${database.replaceAll('`', '``')}\`.* TO 'ale_app'@'%'`);
} finally {
  await c.end();
}
