-- Top 10 methods by self time per app version and anomaly reason (traces × calls).
WITH per AS (
  SELECT t.app_version AS app_version, t.reason AS reason, c.method AS method,
         SUM(c.self_ns) AS self_ns, COUNT(*) AS calls, COUNT(DISTINCT t.trace_id) AS traces
  FROM calls c JOIN traces t ON c.trace_id = t.trace_id
  GROUP BY t.app_version, t.reason, c.method
), ranked AS (
  SELECT app_version, reason, method, self_ns, calls, traces,
         ROW_NUMBER() OVER (PARTITION BY app_version, reason ORDER BY self_ns DESC, method) AS rank
  FROM per
)
SELECT app_version, reason, rank, method, self_ns, calls, traces
FROM ranked
WHERE rank <= 10
ORDER BY app_version, reason, rank
