-- Which playlist holds the most tracks?
SELECT p.Name, COUNT(*) AS tracks
FROM Playlist p JOIN PlaylistTrack pt ON pt.PlaylistId = p.PlaylistId
GROUP BY p.PlaylistId, p.Name
ORDER BY tracks DESC
LIMIT 1
