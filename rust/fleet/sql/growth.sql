-- Methods whose share of jank self time grew most from version {base} to {head}.
WITH per AS (
  SELECT t.app_version AS version, c.method AS method, SUM(c.self_ns) AS self_ns
  FROM calls c JOIN traces t ON c.trace_id = t.trace_id
  WHERE t.reason = 'jank' AND t.app_version IN ({base}, {head})
  GROUP BY t.app_version, c.method
), total AS (
  SELECT version, SUM(self_ns) AS self_ns FROM per GROUP BY version
), share AS (
  SELECT p.version AS version, p.method AS method, p.self_ns AS self_ns,
         CAST(p.self_ns AS DOUBLE) / CAST(t.self_ns AS DOUBLE) AS share
  FROM per p JOIN total t ON p.version = t.version
)
SELECT h.method AS method,
       COALESCE(b.share, 0.0) AS base_share,
       h.share AS head_share,
       h.share - COALESCE(b.share, 0.0) AS growth,
       COALESCE(b.self_ns, 0) AS base_self_ns,
       h.self_ns AS head_self_ns
FROM share h LEFT JOIN share b ON b.method = h.method AND b.version = {base}
WHERE h.version = {head}
ORDER BY growth DESC, method
LIMIT 20
