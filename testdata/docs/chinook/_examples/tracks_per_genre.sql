-- How many tracks does each genre have?
SELECT g.Name AS genre, COUNT(t.TrackId) AS tracks
FROM Genre g
LEFT JOIN Track t ON t.GenreId = g.GenreId
GROUP BY g.GenreId, g.Name
ORDER BY tracks DESC
