"""The corpus folder as typed articles: Markdown and PDF files read, checked and identified, one error per bad file."""
