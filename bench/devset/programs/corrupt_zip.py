# category: corrupt_data
# stage: data_preprocessing
import zipfile

with open("dataset.zip", "wb") as f:
    f.write(b"<html><body>Too many requests</body></html>")  # a download that returned an error page
with zipfile.ZipFile("dataset.zip") as z:
    z.extractall("data")
