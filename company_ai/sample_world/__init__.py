"""The sample world the demo runs on: the sample companies' web pages (`company_pages`) and
the mail their people send back (`demo_mail`), made up from the sample CRM."""
